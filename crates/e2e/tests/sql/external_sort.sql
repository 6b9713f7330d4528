-- Sorts past work_mem (64kB here): the Sort writes sorted runs to a temporary file and merges
-- them (external merge, several merge passes for the bigger inputs). Keys of several types,
-- DESC and NULLS FIRST/LAST, many duplicate keys. PostgreSQL's sort is not stable, so every
-- ORDER BY here ends in a unique column; whole orders are compared through a digest of the
-- ordered ids, and samples of the rows through a filter above the sort. Each "-- case:" block
-- runs in its own psql session on keel and on PostgreSQL 15 and the outputs must be identical.

-- case: external_sort_key_types
set work_mem = '64kB';
create table es (id int, a int, t text, n numeric(10, 2), d date, f float8);
insert into es
select i,
       case when i % 17 = 0 then null else i * 7919 % 1000 end,
       case when i % 23 = 0 then null else 'w' || (i * 31 % 500) end,
       (i * 13 % 10000) / 100.0,
       date '2020-01-01' + i * 3 % 900,
       (i * 37 % 1000) / 7.0
from generate_series(1, 20000) i;
select md5(string_agg(id::text, ',')) from (select id from es order by a, id) s;
select md5(string_agg(id::text, ',')) from (select id from es order by a desc nulls first, t, id desc) s;
select md5(string_agg(id::text || ':' || coalesce(t, '-'), ',')) from (select id, t from es order by t nulls first, n desc, id) s;
select md5(string_agg(id::text, ',')) from (select id from es order by d desc, f, id) s;
select md5(string_agg(id::text, ',')) from (select id from es order by f desc, n, d, id) s;
select * from (select id, a, t, n, d, f from es order by n, d desc, id) s where id % 997 = 0;
select * from (select id, a, t from es order by a nulls first, t desc nulls last, id desc) s where id % 1999 = 1;
select count(*), sum(id), min(t), max(t) from (select * from es order by t desc, a) s;

-- case: external_sort_duplicate_keys
set work_mem = '64kB';
create table ed (id int, k text, g int);
insert into ed select i, 'same', i % 3 from generate_series(1, 30000) i;
select count(*), min(id), max(id) from (select * from ed order by k) s;
select md5(string_agg(id::text, ',')) from (select id from ed order by k, id desc) s;
select md5(string_agg(id::text, ',')) from (select id from ed order by g desc, k, id) s;
select * from (select id, g from ed order by g, k, id) s where id % 4999 = 0;

-- case: external_sort_wide_rows
set work_mem = '64kB';
select md5(string_agg(i::text, ',')) from (select i from generate_series(1, 3000) i order by repeat(md5(i::text), 40), i) s;
select length(x), left(x, 10) from (select repeat(md5(i::text), 200) x, i from generate_series(1, 400) i order by x desc) s where i % 50 = 0;
