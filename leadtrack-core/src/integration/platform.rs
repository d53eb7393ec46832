//! Each platform's settings, described once in [`PLATFORMS`]: a field's name, label, help,
//! how it is typed in, and whether it is needed. The command line's flags, the dashboard's
//! forms and what `integration list` shows are made from this table, and
//! [`SettingsInput::apply`] merges what a person gives over the stored settings by the
//! rules each field states. Adding a platform means its entry here, its settings type, and
//! its delivery module.

use serde_json::{Map, Value};

use super::{IntegrationSettings, Integrations, Secret};
use crate::key::GeneratedKey;
use crate::target::{Refusal, Targets};
use crate::types::IntegrationKind;

/// How a setting is typed in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Input {
    /// Text, trimmed.
    Text,
    /// An address the server calls, checked by the server's rule ([`crate::target`]). A
    /// blank required one is not kept: the `base_url` given with it (the command line's
    /// `--base-url`) stands in for it; a blank optional one is removed.
    Url,
    /// A credential: never shown back; blank keeps the stored one; trimmed only when
    /// required.
    Secret,
    /// On or off.
    Check,
}

/// Whether a setting must have a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    /// Given now or stored before.
    Required,
    /// May be left out; blank removes it (a credential's blank keeps it).
    Optional,
    /// This value when none is given, or a blank one.
    Default(&'static str),
    /// Generated when none is given nor stored, and shown to the person once.
    Generated,
}

/// One setting of a platform.
#[derive(Debug)]
pub struct Field {
    /// Its name: `snake_case` in forms, errors and this table; `--kebab-case` on the
    /// command line; `camelCase` in stored and shown settings.
    pub name: &'static str,
    /// Its label in a form.
    pub label: &'static str,
    /// What to type, for a form's hint and the command line's help.
    pub help: &'static str,
    /// How it is typed in.
    pub input: Input,
    /// Whether it must have a value.
    pub need: Need,
    /// Shown under "Advanced" in a form: for test servers and unusual accounts.
    pub advanced: bool,
    /// The placeholder of its value in the command line's help (`ID`, `TOKEN`).
    pub value_name: &'static str,
    /// The values allowed, when only some are (compared in lowercase).
    pub choices: &'static [&'static str],
    /// The platform's page on how to make its value (a token), or empty.
    pub how_to_make: &'static str,
}

impl Field {
    /// Its name in stored and shown settings (`measurementId`).
    pub fn camel_name(&self) -> String {
        let mut out = String::with_capacity(self.name.len());
        let mut upper = false;
        for c in self.name.chars() {
            if c == '_' {
                upper = true;
            } else if upper {
                out.push(c.to_ascii_uppercase());
                upper = false;
            } else {
                out.push(c);
            }
        }
        out
    }
}

/// A platform leadtrack forwards conversions to.
#[derive(Debug)]
pub struct Platform {
    /// Which one.
    pub kind: IntegrationKind,
    /// Its name for people (`Google Ads`).
    pub title: &'static str,
    /// Its name inside a sentence (`Google Ads`, `the webhook`).
    pub in_sentence: &'static str,
    /// Its name in paths and on the command line (`google-ads`).
    pub slug: &'static str,
    /// What it is, in one line (the command's help).
    pub summary: &'static str,
    /// How to see it work without counting a conversion.
    pub testing: &'static str,
    /// Its settings, in a form's order.
    pub fields: &'static [Field],
}

impl Platform {
    /// The platform `kind` is.
    pub fn of(kind: IntegrationKind) -> &'static Self {
        PLATFORMS
            .iter()
            .find(|platform| platform.kind == kind)
            .unwrap_or(&PLATFORMS[0])
    }

    /// The platform a path segment or command names (`google-ads`).
    pub fn by_slug(slug: &str) -> Option<&'static Self> {
        PLATFORMS.iter().find(|platform| platform.slug == slug)
    }

    /// Its field `name`.
    pub fn field(&self, name: &str) -> Option<&'static Field> {
        self.fields.iter().find(|field| field.name == name)
    }

    /// The environment variable a credential may be given in on the command line
    /// (`LEADTRACK_GA4_API_SECRET`).
    pub fn env_name(&self, field: &Field) -> String {
        format!("LEADTRACK_{}_{}", self.slug, field.name)
            .replace('-', "_")
            .to_ascii_uppercase()
    }
}

const fn field(name: &'static str, label: &'static str, help: &'static str) -> Field {
    Field {
        name,
        label,
        help,
        input: Input::Text,
        need: Need::Required,
        advanced: false,
        value_name: "ID",
        choices: &[],
        how_to_make: "",
    }
}

const fn secret(name: &'static str, label: &'static str, help: &'static str) -> Field {
    Field {
        input: Input::Secret,
        value_name: "SECRET",
        ..field(name, label, help)
    }
}

const fn optional(name: &'static str, label: &'static str, help: &'static str) -> Field {
    Field {
        need: Need::Optional,
        ..field(name, label, help)
    }
}

/// An endpoint to replace the platform's own, for test servers.
const fn endpoint(name: &'static str, label: &'static str, help: &'static str) -> Field {
    Field {
        advanced: true,
        input: Input::Url,
        value_name: "URL",
        ..optional(name, label, help)
    }
}

const fn token(name: &'static str, label: &'static str, help: &'static str) -> Field {
    Field {
        value_name: "TOKEN",
        ..secret(name, label, help)
    }
}

/// Every platform, in [`IntegrationKind`] order.
pub static PLATFORMS: [Platform; 10] = [
    Platform {
        kind: IntegrationKind::GoogleAds,
        title: "Google Ads",
        in_sentence: "Google Ads",
        slug: "google-ads",
        summary: "Google Ads offline click conversions, through the Data Manager API",
        testing: "Each rated lead's conversion is checked when it is sent, and the last \
                  delivery above says how that went. Google can also validate a made-up \
                  conversion here, recording nothing.",
        fields: &[
            field(
                "customer_id",
                "Customer id",
                "The Google Ads account the conversions belong to, e.g. 123-456-7890.",
            ),
            optional(
                "login_customer_id",
                "Manager account id",
                "Only when the credentials act through a manager account.",
            ),
            field("client_id", "OAuth client id", ""),
            secret("client_secret", "OAuth client secret", ""),
            token(
                "refresh_token",
                "Refresh token",
                "With the datamanager scope.",
            ),
            endpoint("token_url", "Token URL", "Blank for Google's own."),
            endpoint("base_url", "API base URL", "Blank for Google's own."),
        ],
    },
    Platform {
        kind: IntegrationKind::Ga4,
        title: "GA4",
        in_sentence: "GA4",
        slug: "ga4",
        summary: "Google Analytics 4, Measurement Protocol",
        testing: "",
        fields: &[
            field(
                "measurement_id",
                "Measurement id",
                "The web stream's id, G-XXXXXXX.",
            ),
            secret(
                "api_secret",
                "API secret",
                "A Measurement Protocol API secret of the stream (Admin › Data streams).",
            ),
            Field {
                input: Input::Check,
                need: Need::Default("false"),
                value_name: "BOOL",
                ..field(
                    "validate",
                    "Validation mode",
                    "Send conversions to GA4's validation endpoint instead: nothing is \
                     recorded in GA4, and its messages fail the delivery. For setting up only.",
                )
            },
            endpoint(
                "base_url",
                "Base URL",
                "Blank for https://www.google-analytics.com.",
            ),
        ],
    },
    Platform {
        kind: IntegrationKind::Meta,
        title: "Meta",
        in_sentence: "Meta",
        slug: "meta",
        summary: "Meta Conversions API",
        testing: "To watch conversions arrive, set a test event code: they then show in \
                  Events Manager's Test events tab, and count for nothing.",
        fields: &[
            field("pixel_id", "Pixel (dataset) id", ""),
            token(
                "access_token",
                "Access token",
                "A system user's token for the Conversions API.",
            ),
            Field {
                need: Need::Default(super::DEFAULT_META_API_VERSION),
                value_name: "VERSION",
                ..field("api_version", "Graph API version", "Blank for the default.")
            },
            Field {
                value_name: "CODE",
                ..optional(
                    "test_event_code",
                    "Test event code",
                    "From Events Manager's Test events tab: events then show there. Remove it \
                     when done.",
                )
            },
            Field {
                need: Need::Default("other"),
                value_name: "SOURCE",
                choices: &[
                    "other",
                    "website",
                    "phone_call",
                    "physical_store",
                    "email",
                    "chat",
                    "system_generated",
                ],
                ..field(
                    "action_source",
                    "Where leads become customers",
                    "Meta's action source: other (blank), phone_call, physical_store, email, \
                     chat, website (needs leads captured in a browser) or system_generated.",
                )
            },
            endpoint(
                "base_url",
                "Base URL",
                "Blank for https://graph.facebook.com.",
            ),
        ],
    },
    Platform {
        kind: IntegrationKind::MicrosoftAds,
        title: "Microsoft Advertising",
        in_sentence: "Microsoft Advertising",
        slug: "microsoft-ads",
        summary: "Microsoft Advertising offline conversions (Campaign Management API v13)",
        testing: "Microsoft Advertising has no test mode for offline conversions: rate a lead \
                  with a Microsoft click id (msclkid) to see a delivery, or check here that \
                  the credentials get a token.",
        fields: &[
            field(
                "customer_id",
                "Customer id",
                "The manager account's customer id (CustomerId).",
            ),
            field(
                "account_id",
                "Account id",
                "The ad account's id (CustomerAccountId).",
            ),
            token(
                "developer_token",
                "Developer token",
                "From the Microsoft Advertising developer portal.",
            ),
            field(
                "client_id",
                "OAuth client id",
                "The Microsoft identity platform application's id.",
            ),
            Field {
                need: Need::Optional,
                ..secret(
                    "client_secret",
                    "OAuth client secret",
                    "Only for a web application; leave blank for a public (desktop) one.",
                )
            },
            token(
                "refresh_token",
                "OAuth refresh token",
                "Granted with the https://ads.microsoft.com/msads.manage scope.",
            ),
            endpoint(
                "token_url",
                "Token URL",
                "Blank for https://login.microsoftonline.com/common/oauth2/v2.0/token.",
            ),
            endpoint(
                "base_url",
                "Base URL",
                "Blank for https://campaign.api.bingads.microsoft.com.",
            ),
        ],
    },
    Platform {
        kind: IntegrationKind::Linkedin,
        title: "LinkedIn",
        in_sentence: "LinkedIn",
        slug: "linkedin",
        summary: "LinkedIn Conversions API",
        testing: "LinkedIn has no test mode for conversions: rate a lead with an email or a \
                  LinkedIn click id (li_fat_id) to see a delivery, or check here that the \
                  credentials get a token.",
        fields: &[
            field(
                "client_id",
                "OAuth client id",
                "The LinkedIn application's client id.",
            ),
            secret("client_secret", "OAuth client secret", ""),
            token(
                "refresh_token",
                "OAuth refresh token",
                "Granted with the rw_conversions scope by a member with a role on the ad \
                 account.",
            ),
            Field {
                need: Need::Default(super::DEFAULT_LINKEDIN_API_VERSION),
                value_name: "VERSION",
                ..field(
                    "api_version",
                    "API version",
                    "YYYYMM (the LinkedIn-Version header); blank for the default.",
                )
            },
            endpoint(
                "token_url",
                "Token URL",
                "Blank for https://www.linkedin.com/oauth/v2/accessToken.",
            ),
            endpoint(
                "base_url",
                "Base URL",
                "Blank for https://api.linkedin.com.",
            ),
        ],
    },
    Platform {
        kind: IntegrationKind::Tiktok,
        title: "TikTok",
        in_sentence: "TikTok",
        slug: "tiktok",
        summary: "TikTok Events API, as CRM events",
        testing: "To watch conversions arrive, set a test event code: they then show in \
                  Events Manager's Test events tab, and count for nothing.",
        fields: &[
            field(
                "event_set_id",
                "CRM event set id",
                "Events Manager, Connect data source, CRM: the id at the top left of the set.",
            ),
            Field {
                how_to_make: "https://ads.tiktok.com/help/article/how-to-postback-signals-through-events-api",
                ..token(
                    "access_token",
                    "Access token",
                    "Generated in the CRM event set's settings for the Events API.",
                )
            },
            Field {
                value_name: "CODE",
                ..optional(
                    "test_event_code",
                    "Test event code",
                    "From Events Manager's Test events tab: events then show there. Remove it \
                     when done.",
                )
            },
            endpoint(
                "base_url",
                "Base URL",
                "Blank for https://business-api.tiktok.com.",
            ),
        ],
    },
    Platform {
        kind: IntegrationKind::Reddit,
        title: "Reddit",
        in_sentence: "Reddit",
        slug: "reddit",
        summary: "Reddit Conversions API v3",
        testing: "To watch conversions arrive, set a test id from Events Manager's Event \
                  Testing: they then show there, and count for nothing.",
        fields: &[
            field(
                "pixel_id",
                "Pixel id",
                "Events Manager: the pixel's id, a2_ or t2_ and letters.",
            ),
            Field {
                how_to_make: "https://ads-api.reddit.com/docs/v3/",
                ..token(
                    "access_token",
                    "Conversion access token",
                    "Events Manager, Conversions API: Generate access token.",
                )
            },
            Field {
                value_name: "ID",
                ..optional(
                    "test_id",
                    "Test id",
                    "From Events Manager's Event Testing: events then show there. Remove it \
                     when done.",
                )
            },
            endpoint(
                "base_url",
                "Base URL",
                "Blank for https://ads-api.reddit.com.",
            ),
        ],
    },
    Platform {
        kind: IntegrationKind::Pinterest,
        title: "Pinterest",
        in_sentence: "Pinterest",
        slug: "pinterest",
        summary: "Pinterest API for Conversions (v5)",
        testing: "Turn on test mode to see conversions checked without being recorded; test \
                  events sent from here always are.",
        fields: &[
            field(
                "ad_account_id",
                "Ad account id",
                "Ads Manager: the ad account's id (digits).",
            ),
            Field {
                how_to_make: "https://help.pinterest.com/en/business/article/conversions-api",
                ..token(
                    "access_token",
                    "Conversion access token",
                    "Ads Manager, Conversions: Generate new token.",
                )
            },
            Field {
                input: Input::Check,
                need: Need::Default("false"),
                value_name: "BOOL",
                ..field(
                    "test",
                    "Test mode",
                    "Pinterest checks each conversion (test=true) and records none. For \
                     setting up only.",
                )
            },
            endpoint(
                "base_url",
                "Base URL",
                "Blank for https://api.pinterest.com.",
            ),
        ],
    },
    Platform {
        kind: IntegrationKind::Snapchat,
        title: "Snapchat",
        in_sentence: "Snapchat",
        slug: "snapchat",
        summary: "Snapchat Conversions API v3",
        testing: "A test event goes to Snapchat's validation endpoint, which checks it and \
                  records nothing.",
        fields: &[
            field(
                "pixel_id",
                "Pixel id",
                "Events Manager: the Snap Pixel's id.",
            ),
            Field {
                how_to_make: "https://developers.snap.com/api/marketing-api/Conversions-API/GetStarted",
                ..token(
                    "access_token",
                    "Conversions API token",
                    "Business settings, Conversions API tokens: Generate token.",
                )
            },
            endpoint("base_url", "Base URL", "Blank for https://tr.snapchat.com."),
        ],
    },
    Platform {
        kind: IntegrationKind::Webhook,
        title: "Webhook",
        in_sentence: "the webhook",
        slug: "webhook",
        summary: "A signed JSON webhook",
        testing: "Each conversion is posted signed with HMAC-SHA256 of the secret; a signed \
                  ping checks that the receiver answers. For new and merged leads as they \
                  arrive, add a lead webhook.",
        fields: &[
            Field {
                input: Input::Url,
                value_name: "URL",
                ..field(
                    "url",
                    "URL",
                    "Where each conversion is posted as signed JSON, an https:// address.",
                )
            },
            Field {
                need: Need::Generated,
                ..secret(
                    "secret",
                    "Signing secret",
                    "Leave blank to have one generated; it is shown once.",
                )
            },
        ],
    },
];

/// One integration's settings as a person gives them, on the command line or in a form,
/// to be merged over the stored ones by [`SettingsInput::apply`].
///
/// A setting not given keeps what is stored. A blank value removes an optional setting (the
/// platform's default applies again) but keeps a required setting or a credential as
/// stored, so a form can leave credentials blank to keep them. Given values are trimmed,
/// credentials excepted.
#[derive(Clone, PartialEq, Eq)]
pub struct SettingsInput {
    kind: IntegrationKind,
    given: Vec<(&'static str, String)>,
}

/// Credentials show as `***`, as [`Secret`]s do.
impl std::fmt::Debug for SettingsInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let platform = self.platform();
        let given: Vec<(&str, &str)> = self
            .given
            .iter()
            .map(|(name, value)| match platform.field(name) {
                Some(field) if field.input == Input::Secret => (*name, "***"),
                _ => (*name, value.as_str()),
            })
            .collect();
        f.debug_struct("SettingsInput")
            .field("kind", &self.kind)
            .field("given", &given)
            .finish()
    }
}

/// Settings ready to store, from [`SettingsInput::apply`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppliedSettings {
    /// The integration's settings.
    pub settings: IntegrationSettings,
    /// The webhook signing secret, when one was generated: shown to the person once.
    pub generated_secret: Option<Secret>,
}

/// Why the settings given for an integration cannot be stored.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    /// A setting the integration needs was given neither now nor before.
    #[error("{setting} is needed to connect {integration}")]
    Missing {
        /// The setting, as the table names it (`measurement_id`).
        setting: &'static str,
        /// The integration, inside a sentence (`GA4`, `Google Ads`, `the webhook`).
        integration: &'static str,
    },
    /// An address is not one the server may call ([`crate::target`]).
    #[error("{integration}'s {label}: {refusal}")]
    Refused {
        /// The setting (`url`, `base_url`).
        setting: &'static str,
        /// The setting's label (`URL`, `API base URL`).
        label: &'static str,
        /// The integration, inside a sentence.
        integration: &'static str,
        /// Why the address is refused.
        refusal: Refusal,
    },
    /// A value is not one of those the setting allows.
    #[error("{words} {given:?} is not one of {integration}'s: {allowed}")]
    NotAChoice {
        /// The setting (`action_source`).
        setting: &'static str,
        /// The setting in words (`action source`).
        words: String,
        /// The integration, inside a sentence.
        integration: &'static str,
        /// What was given.
        given: String,
        /// The values allowed, for people.
        allowed: String,
    },
}

impl SettingsError {
    /// The setting the error is about (`measurement_id`, `url`).
    pub fn setting(&self) -> &'static str {
        match self {
            Self::Missing { setting, .. }
            | Self::Refused { setting, .. }
            | Self::NotAChoice { setting, .. } => setting,
        }
    }
}

/// A fresh webhook signing secret, `whsec_` and 48 hex digits.
pub fn generate_webhook_secret() -> Secret {
    let key = GeneratedKey::generate().key;
    Secret::new(format!("whsec_{}", key.trim_start_matches("lt_")))
}

impl SettingsInput {
    /// The settings of `kind` that `given` has a value for (`None`: not given), asked for
    /// each of the platform's fields, and for `base_url`, which stands in for a blank
    /// address.
    pub fn from_given(kind: IntegrationKind, given: impl Fn(&str) -> Option<String>) -> Self {
        let platform = Platform::of(kind);
        let names = platform.fields.iter().map(|field| field.name);
        let given = names
            .chain((platform.field("base_url").is_none()).then_some("base_url"))
            .filter_map(|name| given(name).map(|value| (name, value)))
            .collect();
        Self { kind, given }
    }

    /// Which integration the input is for.
    pub fn kind(&self) -> IntegrationKind {
        self.kind
    }

    fn platform(&self) -> &'static Platform {
        Platform::of(self.kind)
    }

    fn given(&self, name: &str) -> Option<&str> {
        self.given
            .iter()
            .find(|(given, _)| *given == name)
            .map(|(_, value)| value.as_str())
    }

    /// The settings to store: this input merged over the project's `current` ones, with
    /// each address checked by the operator's `targets`.
    pub fn apply(
        self,
        current: &Integrations,
        targets: &Targets,
    ) -> Result<AppliedSettings, SettingsError> {
        let platform = self.platform();
        let stored =
            current
                .get(platform.kind)
                .map(|settings| match serde_json::to_value(settings) {
                    Ok(Value::Object(object)) => object,
                    _ => Map::new(),
                });
        let mut merged = Map::new();
        merged.insert("kind".to_owned(), Value::from(platform.kind.as_ref()));
        let mut generated_secret = None;
        for field in platform.fields {
            let name = field.camel_name();
            let old = stored.as_ref().and_then(|stored| stored.get(&name));
            let value = match self.merge(field, old, targets)? {
                Merged::Value(value) => value,
                Merged::Generated(secret) => {
                    let value = Value::from(secret.expose());
                    generated_secret = Some(secret);
                    value
                }
            };
            if !value.is_null() {
                merged.insert(name, value);
            }
        }
        // A sign-in's credentials (Reddit's, Pinterest's) stay until a token typed in
        // replaces them.
        let typed_token = self
            .given("access_token")
            .is_some_and(|token| !token.trim().is_empty());
        let signed_in = stored.as_ref().and_then(|stored| stored.get("signedIn"));
        if let Some(signed_in) = signed_in.filter(|_| !typed_token) {
            merged.insert("signedIn".to_owned(), signed_in.clone());
        }
        let settings = serde_json::from_value(Value::Object(merged))
            .expect("every platform's fields make its settings (a test checks each)");
        Ok(AppliedSettings {
            settings,
            generated_secret,
        })
    }

    /// One field's new value, by its rules, from what is given and what is stored.
    fn merge(
        &self,
        field: &'static Field,
        old: Option<&Value>,
        targets: &Targets,
    ) -> Result<Merged, SettingsError> {
        let given = self.given(field.name);
        let old_text = old.and_then(Value::as_str).map(str::to_owned);
        let missing = || SettingsError::Missing {
            setting: field.name,
            integration: self.platform().in_sentence,
        };
        let value = match (field.input, field.need) {
            (Input::Check, _) => {
                let on = match given {
                    Some(given) => matches!(given.trim(), "on" | "true" | "yes" | "1"),
                    None => old.and_then(Value::as_bool).unwrap_or(false),
                };
                return Ok(Merged::Value(Value::from(on)));
            }
            (Input::Secret, need) => {
                let given = given.filter(|value| !value.trim().is_empty());
                // A required credential is trimmed (a pasted token's stray space or newline
                // would fail every delivery); others are kept exactly as given.
                let given = match need {
                    Need::Required => given.map(str::trim),
                    _ => given,
                };
                match (given.map(str::to_owned).or(old_text), need) {
                    (Some(value), _) => Some(value),
                    (None, Need::Generated) => {
                        return Ok(Merged::Generated(generate_webhook_secret()));
                    }
                    (None, Need::Required) => return Err(missing()),
                    (None, _) => None,
                }
            }
            (Input::Url, need) => {
                let given = match given.map(str::trim) {
                    Some("") => None,
                    Some(url) => Some(url.to_owned()),
                    None => old_text,
                };
                let stand_in = || {
                    let base = self.given("base_url").map(str::trim);
                    base.filter(|url| need == Need::Required && !url.is_empty())
                        .map(str::to_owned)
                };
                match given.or_else(stand_in) {
                    Some(url) => Some(String::from(targets.check(&url).map_err(|refusal| {
                        SettingsError::Refused {
                            setting: field.name,
                            label: field.label,
                            integration: self.platform().in_sentence,
                            refusal,
                        }
                    })?)),
                    None if need == Need::Required => return Err(missing()),
                    None => None,
                }
            }
            (Input::Text, need) => {
                let given = given.map(str::trim);
                match (given, need) {
                    (Some(""), Need::Default(default)) => Some(default.to_owned()),
                    (Some(""), Need::Optional) => None,
                    (Some(value), _) if !value.is_empty() => Some(value.to_owned()),
                    (_, Need::Default(default)) => Some(old_text.unwrap_or(default.to_owned())),
                    (_, Need::Required) => Some(old_text.ok_or_else(missing)?),
                    (Some(_), _) => None,
                    (None, _) => old_text,
                }
            }
        };
        let value = match value {
            Some(value) if !field.choices.is_empty() => Some(self.choice(field, value)?),
            other => other,
        };
        Ok(Merged::Value(value.map_or(Value::Null, Value::from)))
    }

    /// `value` as one of `field`'s choices.
    fn choice(&self, field: &'static Field, value: String) -> Result<String, SettingsError> {
        let lower = value.to_ascii_lowercase();
        if field.choices.contains(&lower.as_str()) {
            return Ok(lower);
        }
        Err(SettingsError::NotAChoice {
            setting: field.name,
            words: field.name.replace('_', " "),
            integration: self.platform().in_sentence,
            given: value,
            allowed: field.choices.join(", "),
        })
    }
}

/// A field's merged value.
enum Merged {
    Value(Value),
    Generated(Secret),
}

/// A stored setting as it is shown: its text (none when unset), or on/off.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Shown {
    /// A text setting, `None` when unset.
    Text(Option<String>),
    /// A check.
    Check(bool),
}

impl Integrations {
    /// `kind`'s settings, when it is connected.
    pub fn get(&self, kind: IntegrationKind) -> Option<IntegrationSettings> {
        Some(match kind {
            IntegrationKind::GoogleAds => IntegrationSettings::GoogleAds(self.google_ads.clone()?),
            IntegrationKind::Ga4 => IntegrationSettings::Ga4(self.ga4.clone()?),
            IntegrationKind::Meta => IntegrationSettings::Meta(self.meta.clone()?),
            IntegrationKind::MicrosoftAds => {
                IntegrationSettings::MicrosoftAds(self.microsoft_ads.clone()?)
            }
            IntegrationKind::Linkedin => IntegrationSettings::Linkedin(self.linkedin.clone()?),
            IntegrationKind::Tiktok => IntegrationSettings::Tiktok(self.tiktok.clone()?),
            IntegrationKind::Reddit => IntegrationSettings::Reddit(self.reddit.clone()?),
            IntegrationKind::Pinterest => IntegrationSettings::Pinterest(self.pinterest.clone()?),
            IntegrationKind::Snapchat => IntegrationSettings::Snapchat(self.snapchat.clone()?),
            IntegrationKind::Webhook => IntegrationSettings::Webhook(self.webhook.clone()?),
        })
    }

    /// `kind`'s stored settings as they may be shown, in the table's order, credentials
    /// left out; `None` when it is not connected.
    pub fn shown(&self, kind: IntegrationKind) -> Option<Vec<(&'static Field, Shown)>> {
        let Ok(Value::Object(stored)) = serde_json::to_value(self.get(kind)?) else {
            return None;
        };
        let shown = Platform::of(kind)
            .fields
            .iter()
            .filter(|field| field.input != Input::Secret)
            .map(|field| {
                let value = stored.get(&field.camel_name());
                let shown = match field.input {
                    Input::Check => Shown::Check(value.and_then(Value::as_bool).unwrap_or(false)),
                    _ => Shown::Text(value.and_then(Value::as_str).map(str::to_owned)),
                };
                (field, shown)
            })
            .collect();
        Some(shown)
    }
}

#[cfg(test)]
mod tests {
    use strum::VariantArray;

    use super::*;
    use crate::integration::{MetaActionSource, WebhookSettings};

    fn input(kind: IntegrationKind, given: &[(&str, &str)]) -> SettingsInput {
        SettingsInput::from_given(kind, |name| {
            given
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| (*value).to_owned())
        })
    }

    #[test]
    fn the_table_has_every_platform_in_kind_order() {
        let kinds: Vec<_> = PLATFORMS.iter().map(|platform| platform.kind).collect();
        assert_eq!(kinds, IntegrationKind::VARIANTS);
        let sources: Vec<&str> = MetaActionSource::VARIANTS
            .iter()
            .map(AsRef::as_ref)
            .collect();
        let meta = Platform::of(IntegrationKind::Meta);
        assert_eq!(meta.field("action_source").unwrap().choices, sources);
        assert_eq!(
            Platform::of(IntegrationKind::Ga4).env_name(meta.field("pixel_id").unwrap()),
            "LEADTRACK_GA4_PIXEL_ID"
        );
    }

    /// Every platform connects from its required fields alone, and what it stores reads
    /// back as given: the table and the settings types agree.
    #[test]
    fn every_platform_connects_with_its_required_fields() {
        for platform in &PLATFORMS {
            let given: Vec<(&str, String)> = platform
                .fields
                .iter()
                .filter(|field| field.need == Need::Required)
                .map(|field| {
                    let value = match field.input {
                        Input::Url => "https://example.com/x".to_owned(),
                        _ => format!("{}-value", field.name),
                    };
                    (field.name, value)
                })
                .collect();
            let pairs: Vec<(&str, &str)> = given
                .iter()
                .map(|(name, value)| (*name, value.as_str()))
                .collect();
            let applied = input(platform.kind, &pairs)
                .apply(&Integrations::default(), &local())
                .unwrap_or_else(|err| panic!("{}: {err}", platform.slug));
            assert_eq!(applied.settings.kind(), platform.kind);
            let mut current = Integrations::default();
            current.set(applied.settings);
            let shown = current.shown(platform.kind).unwrap();
            for (field, value) in &given {
                let field = platform.field(field).unwrap();
                if field.input != Input::Secret {
                    let found = shown.iter().find(|(shown, _)| shown.name == field.name);
                    assert_eq!(found.unwrap().1, Shown::Text(Some(value.clone())));
                }
            }
        }
    }

    #[test]
    fn inputs_merge_over_stored_settings() {
        let mut current = Integrations::default();
        let missing = input(IntegrationKind::Ga4, &[])
            .apply(&current, &local())
            .unwrap_err();
        assert_eq!(
            missing.to_string(),
            "measurement_id is needed to connect GA4"
        );
        assert_eq!(missing.setting(), "measurement_id");

        let given = [("measurement_id", " G-ONE "), ("api_secret", " s3cret\n")];
        let applied = input(IntegrationKind::Ga4, &given)
            .apply(&current, &local())
            .unwrap();
        let debug = format!("{:?}", input(IntegrationKind::Ga4, &given));
        assert!(
            !debug.contains("s3cret") && debug.contains("G-ONE"),
            "{debug}"
        );
        assert_eq!(applied.generated_secret, None);
        current.set(applied.settings);
        let stored = current.ga4.clone().unwrap();
        assert_eq!(stored.measurement_id, "G-ONE");
        assert!(!stored.validate);

        // Blank credentials and required values keep the stored ones; blank optional
        // values remove theirs.
        let changed = [
            ("measurement_id", " "),
            ("api_secret", ""),
            ("validate", "true"),
            ("base_url", "http://127.0.0.1:9"),
        ];
        let changed = input(IntegrationKind::Ga4, &changed)
            .apply(&current, &local())
            .unwrap();
        current.set(changed.settings);
        let stored = current.ga4.clone().unwrap();
        assert_eq!(
            (stored.measurement_id.as_str(), stored.api_secret.expose()),
            ("G-ONE", "s3cret")
        );
        assert!(stored.validate);
        assert_eq!(stored.base_url.as_deref(), Some("http://127.0.0.1:9/"));
        let reset = input(IntegrationKind::Ga4, &[("base_url", "")])
            .apply(&current, &local())
            .unwrap();
        let IntegrationSettings::Ga4(reset) = reset.settings else {
            panic!("GA4 settings");
        };
        assert_eq!(reset.base_url, None);
        assert!(reset.validate, "kept when not given");
    }

    #[test]
    fn meta_and_google_ads_need_their_credentials_and_meta_its_choices() {
        let none = Integrations::default();
        let meta = [("pixel_id", "777"), ("access_token", "token")];
        let meta = input(IntegrationKind::Meta, &meta)
            .apply(&none, &local())
            .unwrap();
        let IntegrationSettings::Meta(meta) = meta.settings else {
            panic!("Meta settings");
        };
        assert_eq!(meta.api_version, super::super::DEFAULT_META_API_VERSION);
        assert_eq!(meta.action_source, MetaActionSource::Other);
        let ads = [
            ("customer_id", "1"),
            ("client_id", "cid"),
            ("client_secret", "cs"),
        ];
        let ads = input(IntegrationKind::GoogleAds, &ads)
            .apply(&none, &local())
            .unwrap_err();
        assert_eq!(
            ads,
            SettingsError::Missing {
                setting: "refresh_token",
                integration: "Google Ads"
            }
        );
        let phone = [
            ("pixel_id", "777"),
            ("access_token", "token"),
            ("action_source", "Phone_Call"),
        ];
        let phone = input(IntegrationKind::Meta, &phone)
            .apply(&none, &local())
            .unwrap();
        let IntegrationSettings::Meta(phone) = phone.settings else {
            panic!("Meta settings");
        };
        assert_eq!(phone.action_source, MetaActionSource::PhoneCall);
        let bad = [
            ("pixel_id", "777"),
            ("access_token", "token"),
            ("action_source", "fax"),
        ];
        let bad = input(IntegrationKind::Meta, &bad)
            .apply(&none, &local())
            .unwrap_err();
        assert_eq!(
            bad.to_string(),
            "action source \"fax\" is not one of Meta's: other, website, phone_call, \
             physical_store, email, chat, system_generated"
        );
        assert_eq!(bad.setting(), "action_source");
    }

    /// The exceptions of an operator whose tests' mock platforms listen on loopback.
    fn local() -> Targets {
        Targets::new("127.0.0.0/8", true).unwrap()
    }

    #[test]
    fn every_address_is_one_the_server_may_call() {
        let none = Integrations::default();
        let strict = Targets::default();
        let ga4 = |base: &str| {
            let given = [
                ("measurement_id", "G-1"),
                ("api_secret", "s"),
                ("base_url", base),
            ];
            input(IntegrationKind::Ga4, &given).apply(&none, &strict)
        };
        for (base, why) in [
            (
                "file:///etc/passwd",
                "file: addresses are not called; give an https:// address",
            ),
            (
                "gopher://example.com/",
                "gopher: addresses are not called; give an https:// address",
            ),
            (
                "javascript:alert(1)",
                "javascript: addresses are not called; give an https:// address",
            ),
            (
                "https://169.254.169.254/",
                "the address is link-local (169.254.169.254); the server's operator can allow it",
            ),
        ] {
            let refused = ga4(base).unwrap_err();
            assert_eq!(refused.to_string(), format!("GA4's Base URL: {why}"));
            assert_eq!(refused.setting(), "base_url");
        }
        let IntegrationSettings::Ga4(kept) = ga4("HTTPS://Region1.Example/").unwrap().settings
        else {
            panic!("GA4 settings");
        };
        assert_eq!(kept.base_url.as_deref(), Some("https://region1.example/"));
        let ads = [
            ("customer_id", "1"),
            ("client_id", "cid"),
            ("client_secret", "cs"),
            ("refresh_token", "rt"),
            ("token_url", "dict://127.0.0.1:11211/"),
        ];
        let refused = input(IntegrationKind::GoogleAds, &ads)
            .apply(&none, &strict)
            .unwrap_err();
        assert_eq!(refused.setting(), "token_url");
        let hook = [("url", "https://10.0.0.1/hook")];
        let refused = input(IntegrationKind::Webhook, &hook)
            .apply(&none, &strict)
            .unwrap_err();
        assert_eq!(
            refused.to_string(),
            "the webhook's URL: the address is private (10.0.0.1); the server's operator can allow it"
        );
        assert!(
            input(IntegrationKind::Webhook, &hook)
                .apply(&none, &Targets::new("10.0.0.0/8", false).unwrap())
                .is_ok()
        );
    }

    #[test]
    fn a_webhook_gets_a_secret_once_and_an_http_url() {
        let mut current = Integrations::default();
        let missing = input(IntegrationKind::Webhook, &[])
            .apply(&current, &local())
            .unwrap_err();
        assert_eq!(missing.to_string(), "url is needed to connect the webhook");
        let ftp = input(IntegrationKind::Webhook, &[("url", "ftp://example.com")])
            .apply(&current, &local())
            .unwrap_err();
        assert_eq!(
            ftp.to_string(),
            "the webhook's URL: ftp: addresses are not called; give an https:// address"
        );
        assert_eq!(ftp.setting(), "url");

        let connected = input(
            IntegrationKind::Webhook,
            &[("url", "https://example.com/hook")],
        )
        .apply(&current, &local())
        .unwrap();
        let secret = connected.generated_secret.clone().unwrap();
        assert!(secret.expose().starts_with("whsec_"), "{secret:?}");
        current.set(connected.settings);
        assert_eq!(current.webhook.as_ref().unwrap().secret, secret);

        let moved = [
            ("base_url", "http://127.0.0.1:9/hook"),
            ("url", ""),
            ("secret", " "),
        ];
        let moved = input(IntegrationKind::Webhook, &moved)
            .apply(&current, &local())
            .unwrap();
        assert_eq!(moved.generated_secret, None, "the stored secret is kept");
        let IntegrationSettings::Webhook(WebhookSettings { url, secret: kept }) = moved.settings
        else {
            panic!("webhook settings");
        };
        assert_eq!(
            (url.as_str(), kept.expose()),
            ("http://127.0.0.1:9/hook", secret.expose())
        );
    }

    #[test]
    fn settings_are_shown_without_credentials() {
        let mut current = Integrations::default();
        let given = [
            ("customer_id", "1"),
            ("account_id", "2"),
            ("developer_token", "dev"),
            ("client_id", "cid"),
            ("refresh_token", "rt"),
        ];
        let applied = input(IntegrationKind::MicrosoftAds, &given)
            .apply(&current, &local())
            .unwrap();
        current.set(applied.settings);
        let shown: Vec<(&str, Shown)> = current
            .shown(IntegrationKind::MicrosoftAds)
            .unwrap()
            .into_iter()
            .map(|(field, shown)| (field.name, shown))
            .collect();
        assert_eq!(
            shown,
            [
                ("customer_id", Shown::Text(Some("1".into()))),
                ("account_id", Shown::Text(Some("2".into()))),
                ("client_id", Shown::Text(Some("cid".into()))),
                ("token_url", Shown::Text(None)),
                ("base_url", Shown::Text(None)),
            ]
        );
        assert!(current.shown(IntegrationKind::Linkedin).is_none());
    }
}
