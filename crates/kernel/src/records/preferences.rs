//! A user's own preferences, kept in the workspace file: the locale they read in (over the
//! workspace's `locale`).

use crate::error::{Code, Error, Result};
use crate::locale::Locale;
use crate::records::access::Session;
use rusqlite::OptionalExtension;

impl Session<'_> {
    /// The locale this user reads in: their own, else the workspace's, else English.
    pub fn locale(&self) -> Locale {
        self.own_locale()
            .ok()
            .flatten()
            .or_else(|| self.catalog().definition.locale.clone())
            .and_then(|tag| Locale::parse(&tag))
            .unwrap_or_default()
    }

    /// The locale this user chose for themselves, if any.
    pub fn own_locale(&self) -> Result<Option<String>> {
        Ok(self
            .workspace()
            .conn()
            .prepare_cached("SELECT locale FROM user_preference WHERE user_key = ?1")?
            .query_row([&self.user().key], |r| r.get::<_, Option<String>>(0))
            .optional()?
            .flatten())
    }

    /// Choose this user's own locale (`None`: the workspace's). Any user may, for themselves.
    pub fn set_own_locale(&self, tag: Option<&str>) -> Result<()> {
        let tag = match tag.map(str::trim).filter(|t| !t.is_empty()) {
            Some(t) => Some(
                Locale::parse(t)
                    .ok_or_else(|| {
                        Error::on_field(
                            Code::InvalidValue,
                            "locale",
                            format!("`{t}` is not a locale Countersign can write (English, German, French or Spanish: en, de-DE, fr-FR, es-ES)"),
                        )
                    })?
                    .tag()
                    .to_string(),
            ),
            None => None,
        };
        let tx = self.begin_write()?;
        tx.execute(
            "INSERT INTO user_preference (user_key, locale) VALUES (?1, ?2)
             ON CONFLICT (user_key) DO UPDATE SET locale = excluded.locale",
            rusqlite::params![self.user().key, tag],
        )?;
        tx.commit()?;
        tracing::info!("user locale chosen");
        Ok(())
    }
}
