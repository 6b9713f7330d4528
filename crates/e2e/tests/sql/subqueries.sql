-- IN / NOT IN with a subquery: as a semi-join, as an inner join when the subquery's key is
-- unique, as a hashed subplan (NOT IN, IN under OR or in the select list), with NULLs on
-- either side, empty subqueries and duplicates; a WHERE over a subquery in FROM. Each
-- "-- case:" block runs in its own psql session on keel and on PostgreSQL 15.

-- case: in_semi_join
create table sa (id int primary key, k int, note text);
create table sb (id int primary key, k int, v int);
insert into sa select g, g % 20, 'a' || g from generate_series(1, 200) g;
insert into sa values (201, null, 'null k');
insert into sb select g, g % 7, g % 3 from generate_series(1, 100) g;
insert into sb values (101, null, 0), (102, 5, 0), (103, 5, 0);
select count(*) from sa where k in (select k from sb);
select id, k from sa where k in (select k from sb where v = 1) and id < 30 order by id;
select id from sa where k in (select k from sb where v = 9) order by id;
select id from sa where k in (select k from sb where k is null) order by id;
select id from sa where id in (select k from sb) order by id;
select id from sa where k in (select k + 1 from sb where v = 2) and id <= 25 order by id;
select id from sa where k in (select k from sb) and k in (select v from sb) order by id limit 10;
select id from sa where note in (select 'a' || id from sb where v = 0) order by id limit 8;
select k, count(*) from sa where k in (select k from sb) group by k order by k;

-- case: in_unique_inner_join
create table uc (id int primary key, city text);
create table uo (id int primary key, cid int, amount int);
create index uo_cid on uo (cid);
insert into uc select g, 'city ' || g % 9 from generate_series(1, 300) g;
insert into uo select g, g % 320, g % 50 from generate_series(1, 3000) g;
insert into uo values (3001, null, 1);
analyze uc;
analyze uo;
select count(*) from uo where cid in (select id from uc where city = 'city 7');
select sum(amount) from uo where cid in (select id from uc);
select id, cid from uo where cid in (select id from uc where id < 3) order by id;
select id from uo where cid in (select id from uc where city = 'nowhere');
select o.id, c.city from uo o join uc c on c.id = o.cid where o.cid in (select id from uc where id = 4) order by 1;
select * from uo where cid in (select id from uc where city = 'city 2') and amount > 45 order by id;
select count(*) from uo where id in (select id from uc);

-- case: not_in_nulls
create table na (id int primary key, k int);
create table nb (k int);
insert into na values (1, 1), (2, 2), (3, null), (4, 4);
insert into nb values (1), (4), (4);
select id from na where k not in (select k from nb) order by id;
select id from na where k in (select k from nb) order by id;
select id, k not in (select k from nb) as notin, k in (select k from nb) as isin from na order by id;
insert into nb values (null);
select id from na where k not in (select k from nb) order by id;
select id, k not in (select k from nb) as notin, k in (select k from nb) as isin from na order by id;
select id from na where not (k not in (select k from nb)) order by id;
select id from na where k in (select k from nb) or id = 3 order by id;
select id from na where k in (select k from nb) is null order by id;
select id, k not in (select k from nb where k > 100) as empty_notin,
       k in (select k from nb where k > 100) as empty_in from na order by id;
select id from na where k not in (select k from nb where k > 100) order by id;
select id from na where k not in (select null::int) order by id;
select id from na where k not in (select k from nb where k is not null) order by id;

-- case: in_subplan_types
create table ta (id int primary key, t text, n numeric, b bigint);
insert into ta values (1, 'x', 1.0, 10), (2, 'y', 2.50, 20), (3, null, null, null), (4, 'X', 3, 30);
select id from ta where t in (select 'x' union all select 'z') order by id;
select id from ta where n in (select 1.00 union all select 2.5) order by id;
select id from ta where n not in (select 1.00 union all select 2.5) order by id;
select id from ta where b in (select 20::bigint) or t = 'X' order by id;
select id from ta where id not in (select b::int / 10 from ta where b is not null) order by id;
select id, t in (select t from ta where id > 2) from ta order by id;
select id from ta where id = any (select 2 union select 4) order by id;
select id from ta where id <> all (select 2 union select 4) order by id;

-- case: subquery_in_from_filter
create table fo (id int primary key, cid int, status text, amount int);
insert into fo select g, g % 30, case when g % 4 = 0 then 'open' else 'done' end, g % 13 from generate_series(1, 600) g;
select t.cid, t.n from (select cid, count(*) as n from fo group by cid) t where t.n > 20 order by 1;
select * from (select id, status from fo where amount > 10) s where s.status = 'open' and s.id < 60 order by id;
with recent as (select * from fo where id > 500) select count(*) from recent where status = 'open';
select * from (select id, amount * 2 as twice from fo) s where s.twice > 22 and s.id < 40 order by id;
select * from (select id, random() < 2 as r from fo) s where s.r and s.id < 4 order by id;
select count(*) from (select cid from fo where amount = 3) s where s.cid in (select cid from fo where amount = 4);

-- case: date_trunc_units
create table dt (id int primary key, ts timestamp, tz timestamptz, iv interval);
insert into dt values
  (1, '2024-03-15 10:11:12.345678', '2024-03-15 10:11:12.345678+00', '1 year 5 months 3 days 04:05:06.789'),
  (2, '2001-01-01 00:00:00', '2000-12-31 23:59:59.999999+00', '-1 day -03:04:05'),
  (3, '0050-06-01 12:00 BC', '0005-01-01 BC', '13 months 40 days'),
  (4, null, null, null),
  (5, 'infinity', '-infinity', '1234 years 11 months');
select id, date_trunc('month', ts), date_trunc('week', ts), date_trunc('quarter', ts) from dt order by id;
select id, date_trunc('millennium', ts), date_trunc('century', ts), date_trunc('decade', ts) from dt order by id;
select id, date_trunc('ms', ts), date_trunc('microseconds', ts), date_trunc('SECOND', ts), date_trunc('h', ts) from dt order by id;
select id, date_trunc('day', tz), date_trunc('year', tz), date_trunc('minute', tz) from dt order by id;
select id, date_trunc('hour', iv), date_trunc('year', iv), date_trunc('quarter', iv), date_trunc('century', iv), date_trunc('ms', iv) from dt order by id;
select date_trunc('day', date '2024-02-03');
select date_trunc(null, ts) from dt where id = 1;
select date_trunc('month', ts) as m, count(*) from dt group by 1 order by 1;
select date_trunc('epoch', ts) from dt;
select date_trunc('timezone', ts) from dt;
select date_trunc('week', iv) from dt;
select date_trunc('fortnight', tz) from dt;
select date_trunc('dow', iv) from dt;
