//! Users and permission sets from the CLI, each change a deploy; "see as" through the other
//! user's own session; a change that leaves nobody able to deploy refused. And an import of
//! vCards with a suggested mapping written to a file.

use crate::common::cli;
use serde_json::Value;

fn fields(seen: &Value) -> Vec<String> {
    seen["object"]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["key"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn users_and_permission_sets_change_by_deploy_and_see_as_shows_the_levels() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("stock.countersign");
    assert_eq!(cli(&ws, &["init", "--template", "inventory"]).0, 0);
    let (code, out, err) =
        cli(&ws, &["--as", "me", "user", "add", "sam", "--name", "Sam Store", "--set", "warehouse"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out["generation"], 2);
    let users = cli(&ws, &["--as", "me", "user", "list"]).1;
    assert!(users["users"].as_array().unwrap().iter().any(|u| u["key"] == "sam"));

    // Sam sees suppliers without their order e-mail, and cannot add one.
    let seen = cli(&ws, &["--as", "me", "user", "see-as", "sam", "supplier", "sup_001"]).1;
    assert!(!fields(&seen).contains(&"email".to_string()), "{seen}");
    assert_eq!(seen["object"]["rights"]["create"], false);
    assert_eq!(seen["list"]["records"].as_array().unwrap().len(), 8);
    assert!(seen["record"]["fields"].get("email").is_none(), "{seen}");
    // Given read on the field, he sees it.
    let (code, _, err) =
        cli(&ws, &["--as", "me", "permission-set", "change", "warehouse", "--field", "supplier.email=read"]);
    assert_eq!(code, 0, "{err}");
    let seen = cli(&ws, &["--as", "me", "user", "see-as", "sam", "supplier", "sup_001"]).1;
    assert!(fields(&seen).contains(&"email".to_string()), "{seen}");
    assert!(seen["record"]["fields"]["email"].as_str().unwrap().contains('@'));
    // No rights on products: he does not see the object at all.
    assert_eq!(
        cli(&ws, &["--as", "me", "permission-set", "change", "warehouse", "--object", "product="]).0,
        0
    );
    let seen = cli(&ws, &["--as", "me", "user", "see-as", "sam", "product"]).1;
    assert!(seen["object"].is_null(), "{seen}");

    // Only a user who may deploy changes users; nobody may be left able to deploy.
    let (code, _, err) = cli(&ws, &["--as", "sam", "user", "change", "sam", "--sets", "admin"]);
    assert_eq!((code, err["code"].as_str()), (1, Some("permission")), "{err}");
    let (code, _, err) = cli(&ws, &["--as", "me", "user", "change", "me", "--active", "false"]);
    assert_eq!((code, err["code"].as_str()), (1, Some("definition.invalid")), "{err}");
    assert!(err["message"].as_str().unwrap().contains("metadata.deploy"), "{err}");
    let (code, _, err) = cli(&ws, &["--as", "me", "permission-set", "change", "admin", "--system", "ai.use"]);
    assert_eq!((code, err["code"].as_str()), (1, Some("definition.invalid")), "{err}");
    // With a second deployer first, the change is fine.
    assert_eq!(cli(&ws, &["--as", "me", "user", "change", "sam", "--sets", "admin,warehouse"]).0, 0);
    assert_eq!(cli(&ws, &["--as", "me", "user", "change", "me", "--active", "false"]).0, 0);
}

const CARDS: &str = "BEGIN:VCARD\nVERSION:3.0\nFN:Maya Berg\nN:Berg;Maya;;;\nORG:Brightleaf Studio\nEMAIL:maya@brightleaf.example\nTEL:+1 555 0100\nADR;TYPE=work:;;1 Main St;Lisbon;;;Portugal\nEND:VCARD\n\
BEGIN:VCARD\nVERSION:3.0\nFN:Omar Haddad\nN:Haddad;Omar;;;\nORG:Harbor & Pine\nEMAIL:omar@harbor.example\nEND:VCARD\n";

#[test]
fn vcards_import_from_the_cli_with_a_suggested_mapping() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("work.countersign");
    assert_eq!(cli(&ws, &["init", "--template", "freelance", "--no-records"]).0, 0);
    let file = dir.path().join("people.vcf");
    std::fs::write(&file, CARDS).unwrap();
    let f = file.to_str().unwrap();
    let (code, suggestion, err) = cli(&ws, &["--as", "me", "import", "client", f, "--suggest"]);
    assert_eq!(code, 0, "{err}");
    let mapping = &suggestion["mapping"];
    assert_eq!(
        (mapping["Organization"].as_str(), mapping["Full Name"].as_str()),
        (Some("name"), Some("contact_name"))
    );
    assert_eq!((mapping["Email"].as_str(), mapping["City"].as_str()), (Some("email"), Some("city")));
    let map_file = dir.path().join("mapping.json");
    std::fs::write(&map_file, mapping.to_string()).unwrap();
    let (code, report, err) =
        cli(&ws, &["--as", "me", "import", "client", f, "--mapping", map_file.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!((report["imported"].as_u64(), report["committed"].as_bool()), (Some(2), Some(true)));
    let spec =
        r#"{"object": "client", "fields": ["name", "contact_name", "city"], "sort": [{"field": "name"}]}"#;
    let rows = cli(&ws, &["--as", "me", "query", "--spec", spec]).1;
    assert_eq!(rows["records"][0]["name"], "Brightleaf Studio");
    assert_eq!(rows["records"][0]["contact_name"], "Maya Berg");
    assert_eq!(rows["records"][0]["city"], "Lisbon");
    // A file of a kind the import does not read: a typed refusal.
    let other = dir.path().join("people.pdf");
    std::fs::write(&other, "x").unwrap();
    let (code, _, err) = cli(&ws, &["--as", "me", "import", "client", other.to_str().unwrap()]);
    assert_eq!((code, err["code"].as_str()), (1, Some("import.invalid_csv")), "{err}");
}
