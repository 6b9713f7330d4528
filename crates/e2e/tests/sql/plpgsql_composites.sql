-- PL/pgSQL conversions: composite values: variables of a composite type or a table's row type,
-- record variables assigned whole rows, RETURN and RETURN NEXT of composites (and the
-- errors PostgreSQL gives for a mismatched or non-composite result), and composites as
-- parameters of the body's SQL; and values converted through their text where no cast
-- exists (`d date := 20150717`), as PL/pgSQL does. Each "-- case:" block runs in its own psql session on keel
-- and on PostgreSQL 15 and the outputs must be identical.

-- case: composite_results

create type compostype as (x int, y varchar);

create or replace function compos() returns compostype as $$
declare
  v compostype;
begin
  v := (1, 'hello');
  return v;
end;
$$ language plpgsql;

select compos();

create or replace function compos() returns compostype as $$
declare
  v record;
begin
  v := (1, 'hello'::varchar);
  return v;
end;
$$ language plpgsql;

select compos();

create or replace function compos() returns compostype as $$
begin
  return (1, 'hello'::varchar);
end;
$$ language plpgsql;

select compos();

create or replace function compos() returns compostype as $$
begin
  return (1, 'hello');
end;
$$ language plpgsql;

select compos();

create or replace function compos() returns compostype as $$
begin
  return (1, 'hello')::compostype;
end;
$$ language plpgsql;

select compos();

drop function compos();

create or replace function composrec() returns record as $$
declare
  v record;
begin
  v := (1, 'hello');
  return v;
end;
$$ language plpgsql;

select composrec();

create or replace function composrec() returns record as $$
begin
  return (1, 'hello');
end;
$$ language plpgsql;

select composrec();

drop function composrec();

create or replace function compos() returns setof compostype as $$
begin
  for i in 1..3
  loop
    return next (1, 'hello'::varchar);
  end loop;
  return next null::compostype;
  return next (2, 'goodbye')::compostype;
end;
$$ language plpgsql;

select * from compos();

drop function compos();

create or replace function compos() returns compostype as $$
begin
  return 1 + 1;
end;
$$ language plpgsql;

select compos();

create or replace function compos() returns compostype as $$
declare x int := 42;
begin
  return x;
end;
$$ language plpgsql;

select * from compos();

drop function compos();

create or replace function compos() returns int as $$
declare
  v compostype;
begin
  v := (1, 'hello');
  return v;
end;
$$ language plpgsql;

select compos();

create or replace function compos() returns int as $$
begin
  return (1, 'hello')::compostype;
end;
$$ language plpgsql;

select compos();

drop function compos();
drop type compostype;


-- case: row_variables_and_sets
create type pair as (a int, b text);
create table item (id int, name text, price numeric(8,2));
insert into item values (1, 'apple', 1.5), (2, 'pear', 2.25);
create function cheapest() returns item language plpgsql as $$
declare r item;
begin
  select * into r from item order by price limit 1;
  return r;
end $$;
select cheapest();
select * from cheapest();
select (cheapest()).name;
create function mkpair(x int) returns pair language plpgsql as $$
declare p pair;
begin
  p.a := x;
  p.b := 'n' || x;
  raise notice 'p = %, a = %', p, p.a;
  return p;
end $$;
select mkpair(3), (mkpair(4)).b;
select * from mkpair(5);
create function pairs(n int) returns setof pair language plpgsql as $$
declare p pair;
begin
  for i in 1..n loop
    p := row(i, 'v' || i);
    return next p;
  end loop;
  return next null::pair;
end $$;
select * from pairs(3);
create function nullpair() returns pair language plpgsql as $$
begin
  return null;
end $$;
select nullpair() is null, * from nullpair();
do $$
declare v pair := row(7, 'seven');
  w record;
begin
  raise notice '%', v;
  w := v;
  raise notice '% %', w.a, w.b;
  w := row(1, 2.5, 'x');
  raise notice '% % %', w.f1, w.f2, w;
  v := 5;
end $$;
do $$
declare v pair;
begin
  v := null;
  raise notice 'null? %', v is null;
  insert into item values (9, v.b, v.a);
end $$;
select * from item order by id;

-- case: io_conversion_where_no_cast_exists
create function cast_invoker(integer) returns date as $$
begin
  return $1;
end$$ language plpgsql;
select cast_invoker(20150717);
select cast_invoker(20150718);
do $$ declare d date; b bool; begin d := 20150717; b := 1; raise notice '% %', d, b; end $$;
do $$ declare d date; begin d := 20151317; end $$;
do $$ declare d date := 20240229; begin raise notice '%', d; end $$;
create function dates() returns setof date language plpgsql as $$
begin
  return next 20240101;
end $$;
select * from dates();

-- case: foreach_over_composite_arrays
create type xy_tuple as (x int, y int);
create function foreach_xy(anyarray) returns void as $$
declare x int; y int;
begin
  foreach x, y in array $1 loop
    raise notice 'x = %, y = %', x, y;
  end loop;
end;
$$ language plpgsql;
select foreach_xy(ARRAY[(10,20),(40,69),(35,78)]::xy_tuple[]);
create function foreach_rec(anyarray) returns void as $$
declare r xy_tuple; s xy_tuple[];
begin
  foreach r in array $1 loop raise notice '%', r; end loop;
  foreach s slice 1 in array $1 loop raise notice '%', s; end loop;
end;
$$ language plpgsql;
select foreach_rec(ARRAY[[(10,20),(40,69)],[(35,78),(88,76)]]::xy_tuple[]);
