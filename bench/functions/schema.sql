-- bench/functions: user code on keel and PostgreSQL 15 (issue: arrays, functions, PL/pgSQL,
-- triggers). :rows accounts for the PL/pgSQL lookup-and-update function.
\timing on
create table fb_acct (id int primary key, bal bigint not null, updated_at timestamp);
insert into fb_acct select g, 0, '2024-01-01'::timestamp from generate_series(1, :rows) g;
create function fb_touch(a int, b int, amt int) returns bigint language plpgsql as $$
declare x bigint; y bigint;
begin
  select bal into x from fb_acct where id = a;
  select bal into y from fb_acct where id = b;
  update fb_acct set bal = bal + amt where id = a;
  return x + y;
end $$;
create table fb_events (id bigserial primary key, payload text, created_at timestamptz);
create function fb_stamp() returns trigger language plpgsql as $$
begin
  new.created_at := now();
  return new;
end $$;
create trigger fb_stamp before insert on fb_events for each row execute function fb_stamp();
create or replace function gen_rand_str(int) returns text as $function$
  select string_agg(a[(random()*6)::int+1], '') from generate_series(1,$1), (select array['a','b','c','d','e','f','g']) t(a);
$function$ language sql strict;
analyze fb_acct;
