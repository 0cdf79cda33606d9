//! Records: the workspace file, sessions (the one enforcement path for every read), the one
//! save path for every write, query specs, importing files (CSV, spreadsheets, vCards) and CSV export, the corpus index of long
//! texts, the value index of short texts, the templates a new workspace starts from, deploying a definition (which changes the record tables and their history too), and
//! describing what a user may see, and the business vocabulary (terms) as users read and edit it.

pub mod access;
pub mod corpus;
pub mod counts;
pub mod csvio;
pub mod demo;
pub mod deploy;
pub mod describe;
pub mod import;
pub mod keyset;
pub mod names;
pub mod preferences;
pub mod query;
pub mod save;
pub mod templates;
pub(crate) mod text_index;
pub mod use_index;
pub mod value_index;
pub mod vocabulary;
pub mod workspace;

/// Who watches a long write (an import, a deploy): told its progress (`P`) now and then, and
/// asked whether to stop; a stopped write leaves nothing written.
pub struct Watch<'a, P> {
    pub progress: &'a mut dyn FnMut(&P),
    pub cancelled: &'a dyn Fn() -> bool,
}
