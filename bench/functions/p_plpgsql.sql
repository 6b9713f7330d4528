\set a random(1, :rows)
\set b random(1, :rows)
select fb_touch(:a, :b, 1);
