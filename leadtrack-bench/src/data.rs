//! The data set: realistic, varied leads, the same for every run. Lead `n` is a function
//! of `n` alone, so a lookup can be built for any lead without keeping it.
//!
//! Names, emails, phones in several national formats, companies, messages, click ids on
//! about 40% of leads, GA client ids, channel paths and event ids. Two search terms have
//! known shares: [`RARE_SURNAME`] is the surname of 3% of leads, [`COMMON_TERM`] is in the
//! email of 50%.

use serde_json::{Value, json};

/// The surname of 3% of the leads: a search for it matches about 3% of a project.
pub(crate) const RARE_SURNAME: &str = "Okafor";

/// In the email of half of the leads (their domain).
pub(crate) const COMMON_TERM: &str = "gmail";

const FIRST_NAMES: [&str; 48] = [
    "Ada",
    "Grace",
    "Alan",
    "Linus",
    "Margaret",
    "Ken",
    "Barbara",
    "Dennis",
    "Frances",
    "Edsger",
    "Radia",
    "Tim",
    "Hedy",
    "John",
    "Katherine",
    "Donald",
    "Sophie",
    "Leslie",
    "Anita",
    "Guido",
    "Mary",
    "Niklaus",
    "Lynn",
    "Bjarne",
    "Karen",
    "James",
    "Shafi",
    "Tony",
    "Jean",
    "Whitfield",
    "Annie",
    "Vint",
    "Elena",
    "Mateo",
    "Lucía",
    "Jörg",
    "Zoë",
    "Chen",
    "Aiko",
    "Priya",
    "Omar",
    "Fatima",
    "Lars",
    "Ingrid",
    "Marco",
    "Giulia",
    "Pierre",
    "Amélie",
];

const SURNAMES: [&str; 40] = [
    "Lovelace",
    "Hopper",
    "Turing",
    "Torvalds",
    "Hamilton",
    "Thompson",
    "Liskov",
    "Ritchie",
    "Allen",
    "Dijkstra",
    "Perlman",
    "Berners-Lee",
    "Lamarr",
    "McCarthy",
    "Johnson",
    "Knuth",
    "Wilson",
    "Lamport",
    "Borg",
    "van Rossum",
    "Shaw",
    "Wirth",
    "Conway",
    "Stroustrup",
    "Spärck Jones",
    "Gosling",
    "Goldwasser",
    "Hoare",
    "Sammet",
    "Diffie",
    "Easley",
    "Cerf",
    "Müller",
    "García",
    "Rossi",
    "Dubois",
    "Nakamura",
    "Sharma",
    "Haddad",
    "Andersson",
];

const DOMAINS: [&str; 8] = [
    "outlook.com",
    "yahoo.com",
    "web.de",
    "icloud.com",
    "proton.me",
    "nordwind.example",
    "acme-industries.example",
    "studio-blau.example",
];

const COMPANY_WORDS: [&str; 16] = [
    "Nordwind", "Blau", "Acme", "Helios", "Kestrel", "Lumen", "Vektor", "Alpen", "Baltic", "Cedar",
    "Delta", "Ember", "Fjord", "Granite", "Harbor", "Iris",
];

const COMPANY_FORMS: [&str; 6] = ["GmbH", "Ltd", "Inc.", "S.r.l.", "AB", "& Co."];

const WORDS: [&str; 24] = [
    "please",
    "call",
    "me",
    "about",
    "a",
    "quote",
    "for",
    "our",
    "new",
    "office",
    "we",
    "need",
    "twenty",
    "licenses",
    "next",
    "month",
    "delivery",
    "to",
    "berlin",
    "is",
    "the",
    "price",
    "negotiable",
    "thanks",
];

const FORMS: [&str; 4] = ["Contact", "Quote", "Demo", "Newsletter"];

const CHANNELS: [(&str, &str, &str); 8] = [
    ("google", "cpc", "brand"),
    ("google", "cpc", "generic"),
    ("facebook", "paid_social", "spring"),
    ("newsletter", "email", "may"),
    ("bing", "cpc", "generic"),
    ("linkedin", "paid_social", "b2b"),
    ("google", "organic", ""),
    ("(direct)", "(none)", ""),
];

fn pick<'a>(rng: &mut fastrand::Rng, items: &[&'a str]) -> &'a str {
    items[rng.usize(..items.len())]
}

fn digits(rng: &mut fastrand::Rng, count: usize) -> String {
    (0..count)
        .map(|_| char::from(b'0' + rng.u8(..10)))
        .collect()
}

fn token(rng: &mut fastrand::Rng, count: usize) -> String {
    (0..count).map(|_| rng.alphanumeric()).collect()
}

/// Lead `n`'s generator: seeded by `n`, so the same lead every time.
fn rng(n: u64) -> fastrand::Rng {
    fastrand::Rng::with_seed(n.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5EED)
}

/// The identifying fields of lead `n`: `(first, last, email, phone)`.
fn person(rng: &mut fastrand::Rng) -> (String, String, String, Option<String>) {
    let first = pick(rng, &FIRST_NAMES).to_owned();
    let last = if rng.u32(..1000) < 30 {
        RARE_SURNAME.to_owned()
    } else {
        pick(rng, &SURNAMES).to_owned()
    };
    let domain = if rng.bool() {
        "gmail.com"
    } else {
        pick(rng, &DOMAINS)
    };
    let local: String = format!("{first}.{last}{}", rng.u16(..1000))
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '.')
        .collect();
    let email = format!("{}@{domain}", local.to_lowercase());
    let phone = (rng.u8(..100) < 85).then(|| match rng.u8(..5) {
        0 => format!("+49 30 {}", digits(rng, 7)),
        1 => format!("030 {}", digits(rng, 8)),
        2 => format!("+1 (415) 555-{}", digits(rng, 4)),
        3 => format!("+44 20 7946 {}", digits(rng, 4)),
        _ => format!("+39 06 {}", digits(rng, 8)),
    });
    (first, last, email, phone)
}

/// The email and phone lead `n` was created with, for lookups.
pub(crate) fn identifiers(n: u64) -> (String, Option<String>) {
    let (_, _, email, phone) = person(&mut rng(n));
    (email, phone)
}

/// Lead `n` as a createServerSideLead body (createLead's, with `projectId` added).
pub(crate) fn lead(n: u64) -> Value {
    let mut rng = rng(n);
    let (first, last, email, phone) = person(&mut rng);
    let mut user = json!({"firstName": first, "lastName": last, "email": email});
    if let Some(phone) = phone {
        user["phone"] = json!(phone);
    }
    if rng.u8(..100) < 60 {
        let company = format!(
            "{} {}",
            pick(&mut rng, &COMPANY_WORDS),
            pick(&mut rng, &COMPANY_FORMS)
        );
        user["companyName"] = json!(company);
    }
    let words = rng.usize(6..40);
    let message: Vec<&str> = (0..words).map(|_| pick(&mut rng, &WORDS)).collect();
    let mut form = json!({"formName": pick(&mut rng, &FORMS), "message": message.join(" ")});
    if rng.bool() {
        form["uniqueEventId"] = json!(format!("evt-{n}-{}", token(&mut rng, 12)));
    }
    let mut attribution = json!({});
    let now_ms = 1_770_000_000_000_u64 + n * 1_000;
    match rng.u8(..100) {
        0..25 => attribution["gclid"] = json!(format!("Cj0KCQ{}", token(&mut rng, 40))),
        25..35 => {
            attribution["fbc"] = json!(format!("fb.1.{now_ms}.{}", token(&mut rng, 30)));
            attribution["fbp"] = json!(format!("fb.1.{now_ms}.{}", digits(&mut rng, 10)));
        }
        35..38 => attribution["msclkid"] = json!(token(&mut rng, 32)),
        38..40 => attribution["li_fat_id"] = json!(token(&mut rng, 36)),
        _ => {}
    }
    if rng.u8(..100) < 60 {
        attribution["cid"] = json!(format!("{}.{}", digits(&mut rng, 9), now_ms / 1000));
    }
    let mut body = json!({"userData": user, "formData": form, "attributionData": attribution});
    if rng.u8(..100) < 80 {
        let touches: Vec<Value> = (0..rng.usize(1..4))
            .map(|i| {
                let (source, medium, campaign) = CHANNELS[rng.usize(..CHANNELS.len())];
                json!({"t": now_ms - 86_400_000 * (3 - i as u64), "ch": {"s": source, "m": medium, "cm": campaign}})
            })
            .collect();
        body["channelFlow"] = Value::Array(touches);
    }
    body
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leads_are_stable_varied_and_have_the_stated_shares() {
        assert_eq!(lead(7), lead(7));
        assert_ne!(lead(7), lead(8));
        let count = 20_000;
        let leads: Vec<Value> = (0..count).map(lead).collect();
        let share = |hit: &dyn Fn(&Value) -> bool| {
            leads.iter().filter(|l| hit(l)).count() as f64 / count as f64
        };
        let rare = share(&|l| l["userData"]["lastName"] == RARE_SURNAME);
        assert!((0.025..0.035).contains(&rare), "{rare}");
        let common = share(&|l| {
            l["userData"]["email"]
                .as_str()
                .unwrap()
                .contains(COMMON_TERM)
        });
        assert!((0.48..0.52).contains(&common), "{common}");
        let clicked = share(&|l| {
            let a = &l["attributionData"];
            ["gclid", "fbc", "msclkid", "li_fat_id"]
                .iter()
                .any(|k| a.get(k).is_some())
        });
        assert!((0.37..0.43).contains(&clicked), "{clicked}");
        let (email, phone) = identifiers(7);
        assert_eq!(lead(7)["userData"]["email"], json!(email));
        assert_eq!(
            lead(7)["userData"].get("phone").cloned(),
            phone.map(Value::from)
        );
    }
}
