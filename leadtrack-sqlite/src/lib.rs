//! leadtrack's LeadStore on embedded SQLite (the store arrives in the next commit).

#![forbid(unsafe_code)]
