-- VARIADIC parameters of SQL and PL/pgSQL functions: calls expanded into the variadic array,
-- VARIADIC arr passing one whole, polymorphic variadic anyarray, a plain overload preferred
-- to the expanded form, set-returning variadic functions in FROM and the select list, and
-- CREATE FUNCTION's checks. Each "-- case:" block runs in its own psql session on keel and on
-- PostgreSQL 15.

-- case: variadic_functions
create or replace function vf_ints(variadic int[]) returns void as $$
begin
  for i in array_lower($1,1)..array_upper($1,1) loop
    raise notice '%', $1[i];
  end loop; end;
$$ language plpgsql;
select vf_ints(1,2,3,4,5);
select vf_ints();
create function vf_text(a text, variadic b text[]) returns text language sql as $$ select a || ':' || array_to_string(b, ',') $$;
select vf_text('x', 'a', 'b');
select vf_text('x', 1, 2);
select vf_text('x');
select vf_text('x', array['q']);
select vf_text(a => 'x', b => array['z']);
select * from vf_text('x', 'a', 'b');
create function vf_poly(variadic anyarray) returns anyelement language sql as $$ select max(x) from unnest($1) x $$;
select vf_poly(1, 2.5, 3);
select vf_poly(1, 2, 3);
select vf_poly('a','b');
select vf_poly('a'::text,'b');
create or replace function vf_least(variadic numeric[])
returns numeric as $$
declare aux numeric = $1[array_lower($1,1)];
begin
  for i in array_lower($1,1)+1..array_upper($1,1) loop
    if $1[i] < aux then aux := $1[i]; end if;
  end loop;
  return aux;
end;
$$ language plpgsql immutable strict;
select vf_least(10,1,2,3,-16);
select vf_least(10.2,2.2,-1.1);
select vf_least(10.2,10, -20);
select vf_least(10,20, -1.0);
create or replace function vf_least(numeric) returns numeric as $$ begin raise notice 'non-variadic'; return $1; end; $$ language plpgsql;
select vf_least(10);
create function vf_srf(variadic int[]) returns setof int language plpgsql as $$ begin return query select unnest($1); end $$;
select * from vf_srf(3, 4);
select vf_srf(5, 6);
create function vf_bad(variadic int) returns int language sql as 'select 1';
create function vf_bad2(variadic int[], b int) returns int language sql as 'select 1';
select vf_ints(variadic array[5,6,7]);
select vf_text('x', variadic array['q', 'r']);
select vf_text('x', variadic 'a');
select vf_text(variadic array['q']);
select vf_poly(variadic array[1,2]);
select * from vf_srf(variadic array[8,9]);
select length('variadic');
