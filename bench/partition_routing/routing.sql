-- The same keys into 1,024 hash partitions per key type on both engines; the per-partition
-- counts (and sums, as a check of which keys) must be identical. :rows keys per table.
\set ON_ERROR_STOP on
create unlogged table rr_i4 (k int4) partition by hash (k);
create unlogged table rr_i8 (k int8) partition by hash (k);
create unlogged table rr_tx (k text) partition by hash (k);
create unlogged table rr_nu (k numeric) partition by hash (k);
create unlogged table rr_uu (k uuid) partition by hash (k);
create unlogged table rr_two (a int4, b text) partition by hash (a, b);
select format('create unlogged table %s_%s partition of %s for values with (modulus 1024, remainder %s)', t, i, t, i)
  from generate_series(0, 1023) i, unnest(array['rr_i4', 'rr_i8', 'rr_tx', 'rr_nu', 'rr_uu', 'rr_two']) t \gexec
insert into rr_i4 select g * 2111 - 1000000000 from generate_series(1, :rows) g;
insert into rr_i8 select g::int8 * 9007199 * 1021 - (1::int8 << 50) from generate_series(1, :rows) g;
insert into rr_tx select md5(g::text) || repeat('ü', g % 13) from generate_series(1, :rows) g;
insert into rr_nu select (g::numeric * 1.0001) ^ 2 - 123456.789 from generate_series(1, :rows) g;
insert into rr_uu select md5('u' || g)::uuid from generate_series(1, :rows) g;
insert into rr_two select g % 1009, 'b' || (g / 1009) from generate_series(1, :rows) g;
\pset footer off
select tableoid::regclass, count(*), sum(k) from rr_i4 group by 1 order by 1;
select tableoid::regclass, count(*), sum(k) from rr_i8 group by 1 order by 1;
select tableoid::regclass, count(*), min(k), max(k) from rr_tx group by 1 order by 1;
select tableoid::regclass, count(*), sum(k) from rr_nu group by 1 order by 1;
select tableoid::regclass, count(*), min(k::text), max(k::text) from rr_uu group by 1 order by 1;
select tableoid::regclass, count(*), sum(a), max(b) from rr_two group by 1 order by 1;
