-- Executor paths for join and aggregate speed: ORDER BY ... LIMIT kept as a bounded (top-N)
-- sort, hash joins whose keys repeat (candidate chains, the last candidate taking the outer
-- row), and grouping by columns mixed with computed keys. Each "-- case:" block runs in its
-- own psql session on keel and on PostgreSQL 15 and the outputs must be identical.

-- case: topn_ties_offsets_nulls
create table tn (id int, g int, v text);
insert into tn select i, i % 7, 'v' || (i % 13) from generate_series(1, 2000) i;
insert into tn values (2001, null, null), (2002, null, 'z'), (2003, 3, null);
select id, g from tn order by g, id limit 5;
select id, g from tn order by g desc, id limit 5;
select id, g from tn order by g nulls first, id desc limit 4;
select id, g, v from tn order by v desc nulls last, g, id limit 7 offset 3;
select id, g from tn order by g, id limit 3 offset 1995;
select id from tn order by g, v limit 0;
select count(*) from (select id from tn order by g limit 300) s;
select sum(id) from (select id from tn order by v, id limit 150 offset 20) s;
select id, g from tn order by g, id limit null;
select g, count(*) from tn group by g order by count(*) desc, g limit 3;

-- case: hash_join_repeated_keys
create table hl (id int, k int, a int);
create table hr (id int, k int, b int);
insert into hl select i, i % 10, i from generate_series(1, 60) i;
insert into hl values (61, null, 0);
insert into hr select i, i % 4, i * 10 from generate_series(1, 40) i;
insert into hr values (41, null, 1);
select count(*), sum(hl.a + hr.b) from hl join hr on hl.k = hr.k;
select hl.id, hr.id from hl join hr on hl.k = hr.k and hr.b > 300 order by 1, 2 limit 12;
select hl.id, hr.id, hr.b from hl left join hr on hl.k = hr.k and hr.b > 380 order by 1, 2;
select hl.id, hr.id from hl right join hr on hl.k = hr.k and hl.a < 3 order by 2, 1;
select hl.id, hr.id from hl full join hr on hl.k = hr.k and hl.a > 55 and hr.b < 30 order by 1 nulls first, 2 nulls first;
select count(*) from hl left join hr on hl.k = hr.k where hr.id is null;

-- case: group_by_mixed_keys
create table gm (id int, c text, x int, n numeric(10, 2));
insert into gm select i, 'c' || (i % 5), i % 3, (i % 17) / 4.0 from generate_series(1, 500) i;
insert into gm values (501, null, null, null);
select c, x % 2 as p, count(*), sum(n) from gm group by c, x % 2 order by 1, 2;
select x, c, count(distinct n), max(id) from gm group by x, c order by 1, 2;
select upper(c), count(*) from gm group by upper(c) order by 1;
