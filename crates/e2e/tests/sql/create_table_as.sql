-- CREATE TABLE AS and SELECT INTO: the new table's columns and types come from the query
-- (typmods kept, unknown literals as text), a column list renames the first ones, WITH NO
-- DATA makes it empty, IF NOT EXISTS skips with a notice; PostgreSQL's tags (SELECT n,
-- CREATE TABLE AS) and errors. The table is an ordinary table afterwards. Each "-- case:"
-- block runs in its own psql session on keel and on PostgreSQL 15.

-- case: columns_and_rows
create table cta_src (id int primary key, name varchar(10), price numeric(6,2));
insert into cta_src select g, 'n' || g, g * 1.25 from generate_series(1, 20) g;
create table cta_a as select id, name, price, price * 2 as twice, 'lit' as l, null as n,
  array[id, id + 1] as arr from cta_src where id <= 5;
select * from cta_a order by id;
select pg_typeof(id), pg_typeof(name), pg_typeof(twice), pg_typeof(l), pg_typeof(n), pg_typeof(arr) from cta_a limit 1;
insert into cta_a (id, name) values (6, 'much too long a name');
insert into cta_a (id, price) values (7, 12345.678);
create table cta_b (x, y) as select id, name, price from cta_src where id > 18;
select * from cta_b order by x;
create table cta_c as select count(*), sum(price) from cta_src;
select * from cta_c;
create table cta_d as select * from cta_src with no data;
select count(*) from cta_d;
insert into cta_d values (1, 'x', 1.5);
select * from cta_d;
create table if not exists cta_d as select 1;
create table cta_e as values (1, 'a'), (2, 'b');
select * from cta_e order by column1;
create temp table cta_f as select g from generate_series(1, 3) g;
select * from cta_f order by g;

-- case: select_into
create table cti_src (a int, b text);
insert into cti_src values (1, 'x'), (2, 'y'), (3, null);
select a, b into cti_t from cti_src where a > 1;
select * from cti_t order by a;
select a * 10 as big into temp table cti_u from cti_src;
select * from cti_u order by big;

-- case: errors
create table cte_src (a int);
create table cte_a (x, y, z) as select 1, 2;
create table cte_b as select 1 as a, 2 as a;
create table cte_src as select 1;
create table cte_c as select nosuch from cte_src;
create table cte_d as select * from nosuch;
begin;
create table cte_e as select g from generate_series(1, 5) g;
select count(*) from cte_e;
rollback;
select * from cte_e;
