"""`suite compare`: results side by side with the noise accounted for (issue 30): `analysis` (ratio,
interval, verdict per figure), `comparable` (what must match, the systems side by side), `render`
(text, JSON, Markdown), `page` (the HTML page and its plots)."""
