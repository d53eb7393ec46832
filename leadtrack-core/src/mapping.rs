//! Field mappings: how the values of someone else's shape (a form tool's webhook, a CSV
//! file's columns) become a lead. A mapping is a list of `TARGET=SOURCE` pairs; the targets
//! are the contract's own field names, and each lands where the contract keeps it.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::ValidationError;
use crate::request::{CreateRoute, NewLead};

/// Where a target's value goes in a createLead body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    /// `userData`.
    User,
    /// `formData`.
    Form,
    /// `attributionData`.
    Attribution,
    /// The body's top level (`uniqueIdentifier`).
    Top,
    /// Not in the body: the time the lead was created (imports only).
    Created,
}

/// Every target a mapping may name, with where it goes: the contract's field names
/// (CONTRACT.md section 3), click ids and UTM parameters included.
const TARGETS: &[(&str, Place)] = &[
    ("firstName", Place::User),
    ("lastName", Place::User),
    ("email", Place::User),
    ("phone", Place::User),
    ("companyName", Place::User),
    ("formName", Place::Form),
    ("formMessage", Place::Form),
    ("uniqueEventId", Place::Form),
    ("uniqueIdentifier", Place::Top),
    ("createdAt", Place::Created),
    ("gclid", Place::Attribution),
    ("gbraid", Place::Attribution),
    ("wbraid", Place::Attribution),
    ("fbclid", Place::Attribution),
    ("fbc", Place::Attribution),
    ("fbp", Place::Attribution),
    ("msclkid", Place::Attribution),
    ("li_fat_id", Place::Attribution),
    ("ttclid", Place::Attribution),
    ("_ttp", Place::Attribution),
    ("rdt_cid", Place::Attribution),
    ("_rdt_uuid", Place::Attribution),
    ("ScCid", Place::Attribution),
    ("_scid", Place::Attribution),
    ("epik", Place::Attribution),
    ("_epik", Place::Attribution),
    ("twclid", Place::Attribution),
    ("utm_source", Place::Attribution),
    ("utm_medium", Place::Attribution),
    ("utm_campaign", Place::Attribution),
    ("utm_term", Place::Attribution),
    ("utm_content", Place::Attribution),
];

/// The targets a mapping may name, in the order forms and help list them.
pub fn targets() -> impl Iterator<Item = &'static str> {
    TARGETS.iter().map(|(name, _)| *name)
}

/// Whether `target` is a click id or a UTM parameter (`attributionData`): the fields a
/// form shows apart, after the person's.
pub fn is_attribution(target: &str) -> bool {
    TARGETS
        .iter()
        .any(|(name, place)| *name == target && *place == Place::Attribution)
}

/// The name people know a target by, for a form that offers targets: "First name" for
/// `firstName`; click ids and UTM parameters by their own names.
pub fn label(target: &str) -> &str {
    match target {
        "firstName" => "First name",
        "lastName" => "Last name",
        "email" => "Email",
        "phone" => "Phone",
        "companyName" => "Company",
        "formName" => "Form",
        "formMessage" => "Message",
        "uniqueEventId" => "Submission id",
        "uniqueIdentifier" => "CRM id",
        "createdAt" => "Created",
        other => other,
    }
}

/// Other names a column or a pair may give a target by, folded ([`fold`]): as exports
/// write them in English, German, French, Spanish and Dutch.
const ALIASES: &[(&str, &str)] = &[
    ("first", "firstName"),
    ("givenname", "firstName"),
    ("forename", "firstName"),
    ("vorname", "firstName"),
    ("prénom", "firstName"),
    ("prenom", "firstName"),
    ("nombre", "firstName"),
    ("voornaam", "firstName"),
    ("last", "lastName"),
    ("surname", "lastName"),
    ("familyname", "lastName"),
    ("nachname", "lastName"),
    ("familienname", "lastName"),
    ("nom", "lastName"),
    ("nomdefamille", "lastName"),
    ("apellido", "lastName"),
    ("apellidos", "lastName"),
    ("achternaam", "lastName"),
    ("emailaddress", "email"),
    ("mail", "email"),
    ("emailadresse", "email"),
    ("courriel", "email"),
    ("adresseemail", "email"),
    ("correo", "email"),
    ("correoelectrónico", "email"),
    ("correoelectronico", "email"),
    ("emailadres", "email"),
    ("phonenumber", "phone"),
    ("telephone", "phone"),
    ("tel", "phone"),
    ("mobile", "phone"),
    ("telefon", "phone"),
    ("telefonnummer", "phone"),
    ("handy", "phone"),
    ("mobil", "phone"),
    ("téléphone", "phone"),
    ("portable", "phone"),
    ("teléfono", "phone"),
    ("telefono", "phone"),
    ("móvil", "phone"),
    ("movil", "phone"),
    ("telefoon", "phone"),
    ("telefoonnummer", "phone"),
    ("mobiel", "phone"),
    ("company", "companyName"),
    ("organisation", "companyName"),
    ("organization", "companyName"),
    ("firma", "companyName"),
    ("unternehmen", "companyName"),
    ("société", "companyName"),
    ("societe", "companyName"),
    ("entreprise", "companyName"),
    ("empresa", "companyName"),
    ("bedrijf", "companyName"),
    ("created", "createdAt"),
];

/// The target `name` means, compared without regard to case, spaces, `-` or `_`
/// (`First name` is `firstName`), or by an alias (`Phone number` is `phone`); `None` for
/// no target.
pub fn target(name: &str) -> Option<&'static str> {
    // A target's own name first: Pinterest's `_epik` cookie and its `epik` click id fold
    // alike.
    let exact = TARGETS
        .iter()
        .map(|(target, _)| *target)
        .find(|target| *target == name.trim());
    if exact.is_some() {
        return exact;
    }
    let folded = fold(name);
    let alias = ALIASES
        .iter()
        .find(|(alias, _)| *alias == folded)
        .map(|(_, target)| *target);
    alias.or_else(|| {
        TARGETS
            .iter()
            .map(|(target, _)| *target)
            .find(|target| fold(target) == folded)
    })
}

/// `name` lowercased, without spaces, `-` or `_`.
fn fold(name: &str) -> String {
    name.chars()
        .filter(|c| !matches!(c, ' ' | '-' | '_'))
        .flat_map(char::to_lowercase)
        .collect()
}

/// One `TARGET=SOURCE` pair: which field of the lead a source fills.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldMap {
    /// The lead's field, one of [`targets`].
    pub target: String,
    /// Where its value is read: a JSONPath for webhooks, a column's name for files.
    pub source: String,
}

impl FieldMap {
    /// Parses `TARGET=SOURCE` (the first `=` splits them), the target named as
    /// [`target`] knows it. The problem is said in words.
    pub fn parse(text: &str) -> Result<Self, String> {
        let Some((target_name, source)) = text.split_once('=') else {
            return Err(format!("\"{text}\" is not TARGET=SOURCE"));
        };
        let Some(target) = target(target_name) else {
            return Err(format!(
                "\"{}\" is not a lead field; the fields are {}",
                target_name.trim(),
                targets().collect::<Vec<_>>().join(", ")
            ));
        };
        let source = source.trim();
        if source.is_empty() {
            return Err(format!("{target} is mapped from nothing"));
        }
        Ok(Self {
            target: target.to_owned(),
            source: source.to_owned(),
        })
    }
}

/// `base` with `overrides` in place of the pairs of the same target, and added after.
pub fn overridden(base: &[FieldMap], overrides: &[FieldMap]) -> Vec<FieldMap> {
    let mut mapped: Vec<FieldMap> = base
        .iter()
        .filter(|pair| !overrides.iter().any(|o| o.target == pair.target))
        .cloned()
        .collect();
    mapped.extend(overrides.iter().cloned());
    mapped
}

/// A lead gathered from mapped values, before it is checked.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MappedLead {
    /// The createLead body the values make.
    pub body: Map<String, Value>,
    /// The `createdAt` value, as found (imports read it; webhooks ignore it).
    pub created_at: Option<String>,
}

impl MappedLead {
    /// Sets `target` (one of [`targets`]) to `value`, trimmed; an empty value, or a
    /// target already set, changes nothing (the first source found wins).
    pub fn set(&mut self, target: &str, value: &str) {
        let value = value.trim();
        let Some((name, place)) = TARGETS.iter().find(|(name, _)| *name == target) else {
            return;
        };
        if value.is_empty() {
            return;
        }
        let object = match place {
            Place::Created => {
                self.created_at.get_or_insert_with(|| value.to_owned());
                return;
            }
            Place::Top => &mut self.body,
            Place::User => section(&mut self.body, "userData"),
            Place::Form => section(&mut self.body, "formData"),
            Place::Attribution => section(&mut self.body, "attributionData"),
        };
        object
            .entry(*name)
            .or_insert_with(|| Value::String(value.to_owned()));
    }

    /// Keeps `value` as `formData.{key}` (what a lead came with that no field takes).
    pub fn keep(&mut self, key: &str, value: Value) {
        section(&mut self.body, "formData").insert(key.to_owned(), value);
    }

    /// The lead, checked by the keyed route's rules (CONTRACT.md section 3): `userData`
    /// is present (empty when nothing mapped to it), and a lead with no data is refused.
    pub fn lead(&self) -> Result<NewLead, ValidationError> {
        let mut body = self.body.clone();
        body.entry("userData")
            .or_insert_with(|| Value::Object(Map::new()));
        NewLead::from_object(body, CreateRoute::Server)
    }
}

/// `body[name]` as an object, made when missing.
fn section<'a>(body: &'a mut Map<String, Value>, name: &str) -> &'a mut Map<String, Value> {
    let entry = body
        .entry(name)
        .or_insert_with(|| Value::Object(Map::new()));
    if !entry.is_object() {
        *entry = Value::Object(Map::new());
    }
    entry.as_object_mut().expect("made an object above")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_pair_names_a_field_in_any_case_and_a_source() {
        let pair = FieldMap::parse("FirstName = $.name.first").unwrap();
        assert_eq!(pair.target, "firstName");
        assert_eq!(pair.source, "$.name.first");
        for (name, target) in [
            ("First name", "firstName"),
            ("E-mail", "email"),
            ("Phone number", "phone"),
            ("li-fat-id", "li_fat_id"),
            ("_epik", "_epik"),
            ("epik", "epik"),
            ("sccid", "ScCid"),
            ("_scid", "_scid"),
            ("RDT_CID", "rdt_cid"),
            ("UTM_Source", "utm_source"),
            // Exports' headers in English, German, French, Spanish and Dutch.
            ("Given name", "firstName"),
            ("Surname", "lastName"),
            ("Vorname", "firstName"),
            ("Nachname", "lastName"),
            ("Telefon", "phone"),
            ("Firma", "companyName"),
            ("Prénom", "firstName"),
            ("Nom", "lastName"),
            ("Téléphone", "phone"),
            ("Société", "companyName"),
            ("Courriel", "email"),
            ("Nombre", "firstName"),
            ("Apellido", "lastName"),
            ("Teléfono", "phone"),
            ("Empresa", "companyName"),
            ("Correo electrónico", "email"),
            ("Voornaam", "firstName"),
            ("Achternaam", "lastName"),
            ("Telefoon", "phone"),
            ("Bedrijf", "companyName"),
            ("E-Mail-Adresse", "email"),
        ] {
            assert_eq!(super::target(name), Some(target), "{name}");
        }
        assert_eq!(super::label("firstName"), "First name");
        assert_eq!(super::label("gclid"), "gclid");
        assert_eq!(super::target("notes"), None);
        // A date column is not taken for the lead's time, nor a message column away from
        // the form's message, without a person's choice.
        assert_eq!(super::target("Datum"), None);
        assert_eq!(super::target("Nachricht"), None);
        assert_eq!(
            FieldMap::parse("email=").unwrap_err(),
            "email is mapped from nothing"
        );
        assert!(FieldMap::parse("nickname=x").unwrap_err().starts_with(
            "\"nickname\" is not a lead field; the fields are firstName, lastName, email"
        ));
        assert_eq!(
            FieldMap::parse("email").unwrap_err(),
            "\"email\" is not TARGET=SOURCE"
        );
    }

    #[test]
    fn values_land_where_the_contract_keeps_them() {
        let mut lead = MappedLead::default();
        lead.set("email", " ada@example.com ");
        lead.set("email", "second@example.com");
        lead.set("formName", "Contact");
        lead.set("gclid", "abc");
        lead.set("uniqueIdentifier", "crm-1");
        lead.set("createdAt", "2026-01-02T03:04:05Z");
        lead.set("phone", "  ");
        assert_eq!(
            Value::Object(lead.body.clone()),
            json!({
                "userData": {"email": "ada@example.com"},
                "formData": {"formName": "Contact"},
                "attributionData": {"gclid": "abc"},
                "uniqueIdentifier": "crm-1",
            })
        );
        assert_eq!(lead.created_at.as_deref(), Some("2026-01-02T03:04:05Z"));
        assert!(is_attribution("utm_source") && !is_attribution("email"));
        let checked = lead.lead().unwrap();
        assert_eq!(
            checked.data.user_data.get("email"),
            Some(&json!("ada@example.com"))
        );
    }

    #[test]
    fn a_lead_with_nothing_mapped_is_refused_as_the_contract_says() {
        let err = MappedLead::default().lead().unwrap_err();
        assert_eq!(err.code, crate::error::ErrorCode::NoLeadData);
    }

    #[test]
    fn overrides_replace_their_targets_and_add_the_rest() {
        let base = [
            FieldMap::parse("email=$.a").unwrap(),
            FieldMap::parse("phone=$.b").unwrap(),
        ];
        let overrides = [
            FieldMap::parse("phone=$.c").unwrap(),
            FieldMap::parse("gclid=$.d").unwrap(),
        ];
        let sources: Vec<_> = overridden(&base, &overrides)
            .into_iter()
            .map(|pair| format!("{}={}", pair.target, pair.source))
            .collect();
        assert_eq!(sources, ["email=$.a", "phone=$.c", "gclid=$.d"]);
    }
}
