-- Composite types: CREATE TYPE ... AS, a table's row type, row constructors, field
-- selection, record_in/record_out text, comparison, indexes on a composite column, and
-- DROP TYPE with its dependents. Each "-- case:" block runs in its own psql session on
-- keel and on PostgreSQL 15 and the outputs must be identical.

-- case: values_and_text
create type pair as (a int, b text);
create type trio as (p pair, c numeric(6,2), d date);
select row(1, 'x')::pair;
select (row(1, 'x')::pair).b, (row(2, 'y')::pair).a + 1;
select '(5,"hi there")'::pair, ('(5,"hi there")'::pair).b;
select '(,)'::pair, ('(,)'::pair).a is null;
select row(row(1,'q')::pair, 3.14159, '2024-02-29')::trio;
select ((row(row(1,'q')::pair, 3.1, '2024-02-29')::trio).p).b;
select pg_typeof(row(1,'x')::pair), pg_typeof(row(1,'x'));
select row(1, 'a', null), row(), (1, 2.5, 'z');
select row(1,'x')::pair = row(1,'x')::pair, row(1,'x')::pair < row(2,'a')::pair;
select '(1,2)'::pair;
select 'junk'::pair;
select '(1,x,3)'::pair;
select row(1,'x',3)::pair;
select row(1)::pair;
select (row(1,'x')::pair).nope;

-- case: columns_and_row_types
create type pair as (a int, b text);
create table pt (id int, v pair);
insert into pt values (1, row(10, 'ten')), (2, '(20,twenty)'), (3, null), (4, '(,)');
select * from pt order by id;
select id, (v).a, (v).b from pt order by id;
select id from pt where (v).a > 15;
select pt from pt where id = 1;
select pt.*, pt from pt order by id desc limit 2;
select v::text, length(v::text) from pt order by id;
create table plain (x int, y text);
insert into plain values (1, 'one'), (2, 'two');
select plain, (plain).y from plain order by x;
select p from plain p order by 1;
create function mk(int, text) returns pair language sql as $$ select $1, $2 $$;
select mk(7, 'seven'), (mk(8, 'eight')).b;
create function first_plain() returns plain language sql as $$ select * from plain order by x limit 1 $$;
select first_plain();
select (first_plain()).y;

-- case: drop_type_dependents
create type pair as (a int, b text);
create type trio as (p pair, c numeric(6,2), d date);
create table pt (id int, v pair);
create table plain (x int, y text);
create function mk(int, text) returns pair language sql as $$ select $1, $2 $$;
create type pair as (z int);
drop type pair;
drop type if exists nosuch;
drop type nosuch;
drop table pt;
drop function mk(int, text);
drop type pair;
select null::trio;
drop type trio;
drop type plain;

-- case: compare_group_and_update
create type pair as (a int, b text);
create table pt (id int, v pair);
insert into pt values (1, row(10, 'ten')), (2, '(20,twenty)'), (3, null), (4, '(,)'), (5, '(10,ten)');
select v, count(*) from pt group by v order by v;
select distinct v from pt order by v desc;
select id from pt where v = row(10,'ten')::pair order by id;
select id from pt where v in (row(20,'twenty')::pair, '(10,ten)') order by id;
select (1,2) = (1,2), (1,2) < (1,3), row(1,null) = row(1,2);
select v is null, v is not null from pt order by id;
select max(v) from pt;
update pt set v = row((v).a + 1, upper((v).b)) where id = 1;
select * from pt where id = 1;
select '(1, x )'::pair, '( 1,x)'::pair;
select '("a""b",c)'::pair;
select row(1, 'a"b,c')::pair::text;
select id from pt where v > '(15,x)' order by id;

-- case: composite_index
create type pair as (a int, b text);
create table pt (id int, v pair);
insert into pt select g, row(g % 100, 'x' || g)::pair from generate_series(1, 20000) g;
create index pt_v on pt (v);
analyze pt;
explain (costs off) select id from pt where v = row(10,'x10')::pair;
select id from pt where v = row(10,'x10')::pair;
select count(*) from pt where v < row(3,'')::pair;
select count(*) from pt where v > row(98, 'x9998')::pair;

-- case: spilled_rows_keep_their_composites
create type pair as (a int, b text);
create table src (id int, v pair);
set work_mem = '64kB';
insert into src select g, row(g % 7, 'v' || g)::pair from generate_series(1, 30000) g;
select count(*), count(v), sum((v).a) from src;
select v from src order by v desc, id limit 3;

-- case: composite_null_tests_with_an_index
create type pair as (a int, b text);
create table pn (id int, v pair);
insert into pn select g, case when g % 3 = 0 then '(,)'::pair when g % 3 = 1 then row(g, 'x')::pair end from generate_series(1, 3000) g;
create index pn_v on pn (v);
analyze pn;
select count(*) from pn where v is not null;
select count(*) from pn where v is null;

-- case: arrays_of_composites
create type comptype as (f1 int, f2 text);
create table comptable (c1 comptype, c2 comptype[]);
insert into comptable values (row(1,'foo'), array[row(2,'bar')::comptype, row(3,'baz')::comptype]);
insert into comptable values (row(4,'q'), '{"(5,\"x y\")",NULL}');
select * from comptable order by c1;
select c2[2].f2, c2[1].f1 + 1 from comptable order by c1;
select pg_typeof(c2), pg_typeof(c2[1]) from comptable limit 1;
select array_agg(c1 order by c1) from comptable;
select c2 = c2, c2 < '{"(9,z)"}'::comptype[] from comptable order by c1;
select ARRAY[(10,20),(40,69)]::comptype[], pg_typeof(ARRAY[(1,2)]);
select '{"(1,2,3)"}'::comptype[];
drop type comptype;
drop type comptype cascade;

-- case: array_casts_and_subqueries
select width_bucket(5, ARRAY[1, 3, 9, 'NaN', 'NaN']::float8[]);
select ARRAY[1.1] || ARRAY[2,3,4], ARRAY[1] || 2.5, 1.5 || ARRAY[2];
select array(select array[i, i/2] from generate_series(1,4) i);
select array(select array['Hello', i::text] from generate_series(9,11) i);
select array(select null::int[] from generate_series(1,2));
select array(select '{}'::int[] from generate_series(1,2));
select array(select x from (select '{1}'::int[] union all select '{1,2}') s(x));
