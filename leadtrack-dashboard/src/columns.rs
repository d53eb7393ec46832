//! The inbox's columns: the ones a person can show, in the order the table has them, and
//! the ones shown until they choose. The choice is kept with the user (their
//! preferences), by the columns' names.

use leadtrack_core::request::query::SortField;
use strum::VariantArray;

/// A column of the inbox.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, strum::AsRefStr, strum::EnumString, strum::VariantArray,
)]
#[strum(serialize_all = "camelCase")]
pub(crate) enum Col {
    /// When the lead came in.
    Created,
    /// The person, a link to the lead (always shown).
    Name,
    /// Their email.
    Email,
    /// Their phone.
    Phone,
    /// Their company.
    Company,
    /// The form they sent.
    Form,
    /// Source / medium, first and last.
    Source,
    /// The last visit's campaign.
    Campaign,
    /// The last visit's landing page.
    LandingPage,
    /// A badge per platform whose click id the lead carries.
    ClickIds,
    /// Who it is assigned to, or "Take" for an unassigned lead.
    Assignee,
    /// The price, an input.
    Price,
    /// The rating: a label dropdown, the platforms it goes to, and Save.
    Status,
}

/// The columns shown until a person chooses.
const DEFAULT: [Col; 9] = [
    Col::Created,
    Col::Name,
    Col::Email,
    Col::Form,
    Col::Source,
    Col::ClickIds,
    Col::Assignee,
    Col::Price,
    Col::Status,
];

impl Col {
    /// Its heading.
    pub(crate) fn title(self) -> &'static str {
        match self {
            Self::Created => "Created",
            Self::Name => "Name",
            Self::Email => "Email",
            Self::Phone => "Phone",
            Self::Company => "Company",
            Self::Form => "Form",
            Self::Source => "Source / medium",
            Self::Campaign => "Campaign",
            Self::LandingPage => "Landing page",
            Self::ClickIds => "Click ids",
            Self::Assignee => "Assignee",
            Self::Price => "Price",
            Self::Status => "Rating",
        }
    }

    /// The sort its heading offers, if any.
    pub(crate) fn sort_field(self) -> Option<SortField> {
        match self {
            Self::Created => Some(SortField::CreatedAt),
            Self::Name => Some(SortField::FirstName),
            Self::Email => Some(SortField::Email),
            Self::Price => Some(SortField::Price),
            _ => None,
        }
    }

    /// The columns `saved` names (unknown names ignored), in table order, the name always
    /// among them; the defaults when nothing was saved.
    pub(crate) fn chosen(saved: Option<&[String]>) -> Vec<Col> {
        let Some(saved) = saved else {
            return DEFAULT.to_vec();
        };
        Self::VARIANTS
            .iter()
            .copied()
            .filter(|col| *col == Col::Name || saved.iter().any(|name| name == col.as_ref()))
            .collect()
    }

    /// The columns a posted chooser form ticked, as names to keep.
    pub(crate) fn names<'a>(ticked: impl Iterator<Item = &'a str>) -> Vec<String> {
        let ticked: Vec<String> = ticked.map(str::to_owned).collect();
        Self::chosen(Some(&ticked))
            .iter()
            .map(|col| col.as_ref().to_owned())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_choice_keeps_table_order_and_the_name_and_drops_what_it_does_not_know() {
        assert_eq!(Col::chosen(None), DEFAULT);
        let saved = ["price", "bogus", "email"].map(str::to_owned);
        assert_eq!(
            Col::chosen(Some(&saved)),
            [Col::Name, Col::Email, Col::Price]
        );
        assert_eq!(
            Col::names(["landingPage", "<script>", "created"].into_iter()),
            ["created", "name", "landingPage"]
        );
    }
}
