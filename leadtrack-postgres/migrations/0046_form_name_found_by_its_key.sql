-- Issue #48: the `formName` filter (a form's exact name) finds its leads through the index
-- of the name's key (`leads_form_key`, the `form` filter's; the key is the name lowercased)
-- and checks each for the name (core's `LeadQuery::facet_filters`), so the name's own
-- index, one more index written with every lead, goes.

DROP INDEX leads_form;
