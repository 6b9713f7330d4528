-- Set-returning functions: unnest (several arrays, WITH ORDINALITY), generate_subscripts,
-- regexp_matches and regexp_split_to_table in FROM, implicitly LATERAL after other FROM items,
-- and in the select list, where the calls advance together (PostgreSQL 10's rule). Each
-- "-- case:" block runs in its own psql session on keel and on PostgreSQL 15.

-- case: unnest in from
select * from unnest(array[1,2], array['a','b','c']);
select * from unnest(array[1,2], array['a','b','c']) t;
select * from unnest(array[1,2]) with ordinality;
select * from unnest(array[1,2]) with ordinality t;
select * from unnest(array[1,2]) with ordinality t(x);
select t.* from generate_series(1,2) with ordinality as t(a,b);
select unnest.* from unnest(array[3]);
select * from unnest('{{1,2},{3,NULL}}'::int[]) u(v) where v is distinct from 2;
select * from unnest(null::int[]);
select * from unnest('{}'::text[]);
select * from unnest('{1,2}'::int[]) where unnest > 1;
select x, y from unnest(array['a','b']) as x, generate_series(1,2) y order by 1, 2;
-- case: srfs in select list
select generate_subscripts(array[[1,2],[3,4]], 2), generate_subscripts('[3:5]={1,2,3}'::int[],1,true);
select unnest(array[1,2,3]), unnest(array['a','b']), generate_series(1,4);
select unnest(null::int[]), 1;
select unnest(array[1,2]) + 1 as x, 'k';
select generate_subscripts(array[1,2], 3);
select regexp_matches('abcabc', '(b)(c)', 'g'), regexp_split_to_table('a b  c', '\s+');
select (regexp_matches('a1b2c3', '[a-z](\d)', 'g'))[1];
select regexp_matches('abc', 'x');
select regexp_split_to_table('a,b', ',', 'g');
-- case: srf with tables
create table st(id int, tags text[]);
insert into st values (1, '{x,y}'), (2, '{}'), (3, null), (4, '{z}');
select id, unnest(tags) from st order by id, 2;
select id, unnest(tags) as tag, generate_series(1,2) from st where id <> 1 order by 1, 2, 3;
select unnest(array_agg(id order by id)) from st;
select count(*) from (select unnest(tags) from st) s;
select tag, count(*) from st, unnest(tags) tag group by tag order by tag;
drop table st;
-- case: srf errors
select 1 where unnest(array[1]) = 1;
select sum(unnest(array[1]));
select unnest('{1,2}');
select unnest(1);
select generate_subscripts(1, 1);
select regexp_matches(1, 'a');
-- case: srf explain
explain (costs off) select * from unnest(array[1,2]) with ordinality;
explain (costs off) select unnest(array[1,2]) from generate_series(1,2);
-- case: lateral functions
create table lt(id int, a int[], s text);
insert into lt values (1, '{1,2}', 'a b'), (2, '{3}', 'c'), (3, null, null);
select id, x from lt, unnest(a) x order by 1, 2;
select id, x, y from lt, unnest(a, array[10,20,30]) as u(x, y) order by 1, 2, 3;
select lt.id, w from lt, regexp_split_to_table(s, ' ') w order by 1, 2;
select id, g from lt cross join generate_series(1, id) g order by 1, 2;
select id, n from lt, lateral generate_series(1, id) n where n > 1 order by 1, 2;
select count(*) from lt, unnest(array[1,2]) x;
drop table lt;
-- case: set_returning_user_functions_in_the_select_list
create function srf1(n int) returns setof int language plpgsql as $$ begin for i in 1..n loop return next i; end loop; end $$;
select srf1(3);
select srf1(2), 'x';
select srf1(2), generate_series(1,3);
create function srf2(n int) returns setof text language sql as $$ select 'v' || g from generate_series(1, $1) g $$;
select srf2(3);
select n, srf2(n) from (values (1), (2), (null)) v(n) order by 1, 2;
select srf2(2) where false;
select count(*) from (select srf2(4)) s;
create function srf4(n int) returns setof int language sql strict as $$ select g from generate_series(1, $1) g $$;
select srf4(null), srf4(2);
select srf4(2) + 1;
select * from srf4(3);
select sum(x) from (select srf1(4) x) s;
select 1 where srf1(1) = 1;
drop function srf1(int); drop function srf2(int); drop function srf4(int);
