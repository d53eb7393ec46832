//! What the browser suites share: a browser driven over WebDriver (`browser`), and the site
//! the dashboard's suites sign in to (`site`).

pub(crate) mod browser;
pub(crate) mod site;
