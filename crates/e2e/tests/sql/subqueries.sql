-- IN / NOT IN with a subquery: as a semi-join, as an inner join when the subquery's key is
-- unique, as a hashed subplan (NOT IN, IN under OR or in the select list), with NULLs on
-- either side, empty subqueries and duplicates; a WHERE over a subquery in FROM. Each
-- "-- case:" block runs in its own psql session on keel and on PostgreSQL 15.

-- case: in_semi_join
create table sq_sa (id int primary key, k int, note text);
create table sq_sb (id int primary key, k int, v int);
insert into sq_sa select g, g % 20, 'a' || g from generate_series(1, 200) g;
insert into sq_sa values (201, null, 'null k');
insert into sq_sb select g, g % 7, g % 3 from generate_series(1, 100) g;
insert into sq_sb values (101, null, 0), (102, 5, 0), (103, 5, 0);
select count(*) from sq_sa where k in (select k from sq_sb);
select id, k from sq_sa where k in (select k from sq_sb where v = 1) and id < 30 order by id;
select id from sq_sa where k in (select k from sq_sb where v = 9) order by id;
select id from sq_sa where k in (select k from sq_sb where k is null) order by id;
select id from sq_sa where id in (select k from sq_sb) order by id;
select id from sq_sa where k in (select k + 1 from sq_sb where v = 2) and id <= 25 order by id;
select id from sq_sa where k in (select k from sq_sb) and k in (select v from sq_sb) order by id limit 10;
select id from sq_sa where note in (select 'a' || id from sq_sb where v = 0) order by id limit 8;
select k, count(*) from sq_sa where k in (select k from sq_sb) group by k order by k;

-- case: in_unique_inner_join
create table sq_uc (id int primary key, city text);
create table sq_uo (id int primary key, cid int, amount int);
create index sq_uo_cid on sq_uo (cid);
insert into sq_uc select g, 'city ' || g % 9 from generate_series(1, 300) g;
insert into sq_uo select g, g % 320, g % 50 from generate_series(1, 3000) g;
insert into sq_uo values (3001, null, 1);
analyze sq_uc;
analyze sq_uo;
select count(*) from sq_uo where cid in (select id from sq_uc where city = 'city 7');
select sum(amount) from sq_uo where cid in (select id from sq_uc);
select id, cid from sq_uo where cid in (select id from sq_uc where id < 3) order by id;
select id from sq_uo where cid in (select id from sq_uc where city = 'nowhere');
select o.id, c.city from sq_uo o join sq_uc c on c.id = o.cid where o.cid in (select id from sq_uc where id = 4) order by 1;
select * from sq_uo where cid in (select id from sq_uc where city = 'city 2') and amount > 45 order by id;
select count(*) from sq_uo where id in (select id from sq_uc);

-- case: not_in_nulls
create table sq_na (id int primary key, k int);
create table sq_nb (k int);
insert into sq_na values (1, 1), (2, 2), (3, null), (4, 4);
insert into sq_nb values (1), (4), (4);
select id from sq_na where k not in (select k from sq_nb) order by id;
select id from sq_na where k in (select k from sq_nb) order by id;
select id, k not in (select k from sq_nb) as notin, k in (select k from sq_nb) as isin from sq_na order by id;
insert into sq_nb values (null);
select id from sq_na where k not in (select k from sq_nb) order by id;
select id, k not in (select k from sq_nb) as notin, k in (select k from sq_nb) as isin from sq_na order by id;
select id from sq_na where not (k not in (select k from sq_nb)) order by id;
select id from sq_na where k in (select k from sq_nb) or id = 3 order by id;
select id from sq_na where k in (select k from sq_nb) is null order by id;
select id, k not in (select k from sq_nb where k > 100) as empty_notin,
       k in (select k from sq_nb where k > 100) as empty_in from sq_na order by id;
select id from sq_na where k not in (select k from sq_nb where k > 100) order by id;
select id from sq_na where k not in (select null::int) order by id;
select id from sq_na where k not in (select k from sq_nb where k is not null) order by id;

-- case: in_subplan_types
create table sq_ta (id int primary key, t text, n numeric, b bigint);
insert into sq_ta values (1, 'x', 1.0, 10), (2, 'y', 2.50, 20), (3, null, null, null), (4, 'X', 3, 30);
select id from sq_ta where t in (select 'x' union all select 'z') order by id;
select id from sq_ta where n in (select 1.00 union all select 2.5) order by id;
select id from sq_ta where n not in (select 1.00 union all select 2.5) order by id;
select id from sq_ta where b in (select 20::bigint) or t = 'X' order by id;
select id from sq_ta where id not in (select b::int / 10 from sq_ta where b is not null) order by id;
select id, t in (select t from sq_ta where id > 2) from sq_ta order by id;
select id from sq_ta where id = any (select 2 union select 4) order by id;
select id from sq_ta where id <> all (select 2 union select 4) order by id;

-- case: subquery_in_from_filter
create table sq_fo (id int primary key, cid int, status text, amount int);
insert into sq_fo select g, g % 30, case when g % 4 = 0 then 'open' else 'done' end, g % 13 from generate_series(1, 600) g;
select t.cid, t.n from (select cid, count(*) as n from sq_fo group by cid) t where t.n > 20 order by 1;
select * from (select id, status from sq_fo where amount > 10) s where s.status = 'open' and s.id < 60 order by id;
with recent as (select * from sq_fo where id > 500) select count(*) from recent where status = 'open';
select * from (select id, amount * 2 as twice from sq_fo) s where s.twice > 22 and s.id < 40 order by id;
select * from (select id, random() < 2 as r from sq_fo) s where s.r and s.id < 4 order by id;
select count(*) from (select cid from sq_fo where amount = 3) s where s.cid in (select cid from sq_fo where amount = 4);

-- case: date_trunc_units
create table sq_dt (id int primary key, ts timestamp, tz timestamptz, iv interval);
insert into sq_dt values
  (1, '2024-03-15 10:11:12.345678', '2024-03-15 10:11:12.345678+00', '1 year 5 months 3 days 04:05:06.789'),
  (2, '2001-01-01 00:00:00', '2000-12-31 23:59:59.999999+00', '-1 day -03:04:05'),
  (3, '0050-06-01 12:00 BC', '0005-01-01 BC', '13 months 40 days'),
  (4, null, null, null),
  (5, 'infinity', '-infinity', '1234 years 11 months');
select id, date_trunc('month', ts), date_trunc('week', ts), date_trunc('quarter', ts) from sq_dt order by id;
select id, date_trunc('millennium', ts), date_trunc('century', ts), date_trunc('decade', ts) from sq_dt order by id;
select id, date_trunc('ms', ts), date_trunc('microseconds', ts), date_trunc('SECOND', ts), date_trunc('h', ts) from sq_dt order by id;
select id, date_trunc('day', tz), date_trunc('year', tz), date_trunc('minute', tz) from sq_dt order by id;
select id, date_trunc('hour', iv), date_trunc('year', iv), date_trunc('quarter', iv), date_trunc('century', iv), date_trunc('ms', iv) from sq_dt order by id;
select date_trunc('day', date '2024-02-03');
select date_trunc(null, ts) from sq_dt where id = 1;
select date_trunc('month', ts) as m, count(*) from sq_dt group by 1 order by 1;
select date_trunc('epoch', ts) from sq_dt;
select date_trunc('timezone', ts) from sq_dt;
select date_trunc('week', iv) from sq_dt;
select date_trunc('fortnight', tz) from sq_dt;
select date_trunc('dow', iv) from sq_dt;

-- case: in_hashed_float_keys
create table sq_fl (id int primary key, f float8);
insert into sq_fl values (1, 0.0), (2, -0.0), (3, 'NaN'), (4, 1.5), (5, null);
select id from sq_fl where f in (select '-0'::float8 union all select 'NaN') order by id;
select id, f not in (select '0'::float8 union all select 'NaN') from sq_fl order by id;
select id from sq_fl where f in (select f from sq_fl where id in (2, 3)) order by id;
