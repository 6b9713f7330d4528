-- Planner statistics as users read them: the pg_stats view after ANALYZE. The tables are
-- small enough that ANALYZE samples every row, so the figures are exact on both engines.

-- case: pg_stats_after_analyze
create table st (id int primary key, grp int, tag text, price numeric(8, 2), at timestamp, note text);
insert into st select g, g % 5, case when g % 3 = 0 then null else 'tag ' || (g % 7) end,
  (g % 13) * 1.25, timestamp '2024-01-01' + g * interval '1 hour', repeat('x', g % 40)
  from generate_series(1, 3000) g;
select count(*) from pg_stats where tablename = 'st';
analyze st;
select * from pg_stats where tablename = 'st' order by attname;
select attname, null_frac, n_distinct from pg_catalog.pg_stats s
  where s.schemaname = 'public' and s.tablename = 'st' and s.null_frac > 0;
select tablename, count(*) from pg_stats where tablename like 'st%' group by tablename;
alter table st add column extra int;
select attname from pg_stats where tablename = 'st' and attname = 'extra';
analyze st;
select attname, null_frac, n_distinct, most_common_vals from pg_stats
  where tablename = 'st' and attname = 'extra';
drop table st;
select count(*) from pg_stats where tablename = 'st';

