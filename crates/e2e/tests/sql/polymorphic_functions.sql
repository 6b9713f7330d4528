-- Polymorphic parameters and results of user functions (anyelement, anyarray, anynonarray,
-- the anycompatible family): each call binds them to its argument types, SQL and PL/pgSQL
-- bodies run with those types, and PostgreSQL's errors where a call or a definition cannot
-- be resolved.

-- case: anyelement_family
create function poly_id(x anyelement) returns anyelement language sql as 'select x';
create function poly_first(x anyarray) returns anyelement language sql as 'select x[1]';
create function poly_pair(x anynonarray) returns anyarray language sql as 'select array[x, x]';
select poly_id(1), pg_typeof(poly_id(1)), poly_id(1.5), pg_typeof(poly_id(1.5)), poly_id('a'::text);
select poly_id(array[1,2]), pg_typeof(poly_id(array[1,2]));
select poly_first(array[3,4]), poly_first(array['x','y']), pg_typeof(poly_first(array[2.5]));
select poly_pair(7), poly_pair('q'::varchar), pg_typeof(poly_pair(now()::date));
select poly_id('a');
select poly_id(null);
select poly_first(1);
select poly_pair(array[1]);
create function poly_same(x anyelement, y anyelement) returns anyelement language sql as 'select coalesce(x, y)';
select poly_same(1, 2), poly_same(null, 5), poly_same(1, '2');
select poly_same(1, 2.5);
select poly_same(1::int2, 3);
select * from poly_id(42);
select * from poly_first(array['a','b']) f;

-- case: anycompatible_family
create function polyc_arr(x anycompatible, y anycompatible) returns anycompatiblearray language sql as 'select array[x, y]';
create function polyc_pick(x anycompatiblenonarray, y anycompatiblearray) returns anycompatible language sql as 'select coalesce(x, y[1])';
select polyc_arr(1, 2.5), pg_typeof(polyc_arr(1, 2.5)), polyc_arr('a', 'b'), pg_typeof(polyc_arr('a', 'b'));
select polyc_arr(1::int2, 3::int8), pg_typeof(polyc_arr(1::int2, 3::int8));
select polyc_pick(1, array[2.5]), pg_typeof(polyc_pick(1, array[2.5])), polyc_pick(null, array[9]);
select polyc_arr(1, 'x');
select polyc_arr(1, 'a'::text);

-- case: plpgsql_bodies_per_type
create function polyp_inc(x anyelement) returns anyelement as $$
begin
  return x + 1;
end$$ language plpgsql;
select polyp_inc(42) as int, polyp_inc(4.5) as num, polyp_inc(42) as again;
select polyp_inc('2020-01-01'::date);
select polyp_inc('x'::text);
create function polyp_both(a anyelement, b anyarray, c anycompatible, d anycompatible,
                           out x anyarray, out y anycompatiblearray) as $$
begin
  x := a || b;
  y := array[c, d];
end$$ language plpgsql;
select x, pg_typeof(x), y, pg_typeof(y) from polyp_both(11, array[1, 2], 42, 34.5);
select x, pg_typeof(x), y, pg_typeof(y) from polyp_both(11, '{1,2}', 'a', 'b');
select * from polyp_both(11, array[1, 2.2], 42, 34.5);
create function polyp_each(anyarray) returns void as $$
declare x int;
begin
  foreach x in array $1 loop
    raise notice '%', x;
  end loop;
end$$ language plpgsql;
select polyp_each(array[1,2,3]);
select polyp_each(array[4.4, 5.6]);
select polyp_each(array['a']);

-- case: definitions_that_cannot_resolve
create function polyd_bad1(x int) returns anyelement language sql as 'select 1';
create function polyd_bad2(x anyelement) returns anycompatible language sql as 'select 1';
create function polyd_bad3(x int) returns anyarray language plpgsql as 'begin return null; end';
create function polyd_bad4(x int, out y anynonarray) language sql as 'select 1';
create function polyd_ok(x anyarray, out y anynonarray) language sql as 'select x[1]';
select polyd_ok(array[5]);
drop function polyd_ok(anyarray);
drop function polyd_ok(anyarray);
