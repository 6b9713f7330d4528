-- The uuid type: its input spellings and errors, comparison and B-tree order, hashing and
-- hash partitioning (rows land in PostgreSQL's partitions), casts, arrays and
-- gen_random_uuid().

-- case: uuid_input_output
select 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid;
select 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'::uuid, '{a0eebc99-9c0b4ef8-bb6d6bb9-bd380a11}'::uuid;
select 'a0eebc999c0b4ef8bb6d6bb9bd380a11'::uuid, 'a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11'::uuid;
select 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1'::uuid;
select ' a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid;
select 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11-'::uuid;
select '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid;
select 'a0eebc99--9c0b-4ef8-bb6d-6bb9bd380a11'::uuid;
select 1::uuid;
select 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid::bytea;
select '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11,NULL}'::uuid[];
select array['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid, null];
select pg_typeof(gen_random_uuid()), length(gen_random_uuid()::text), gen_random_uuid() = gen_random_uuid();
select substr(gen_random_uuid()::text, 15, 1) as version;

-- case: uuid_compare_index
create table uu_t (id uuid primary key, n int);
insert into uu_t values ('00000000-0000-0000-0000-000000000001', 1),
  ('ffffffff-0000-0000-0000-000000000000', 2), ('7fffffff-0000-0000-0000-000000000000', 3);
insert into uu_t values ('00000000-0000-0000-0000-000000000001', 9);
select * from uu_t order by id;
select * from uu_t where id > '70000000-0000-0000-0000-000000000000' order by id desc;
select * from uu_t where id = '7fffffff-0000-0000-0000-000000000000';
explain (costs off) select * from uu_t where id = '7fffffff-0000-0000-0000-000000000000';
select id::text, id::varchar(8) from uu_t order by 1;
select count(distinct id) from uu_t;
select id from uu_t group by id order by id;
select array_agg(id order by id) from uu_t;
select 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid = 'A0EEBC99-9c0b-4ef8-bb6d-6bb9bd380a11',
  'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid < '00000000-0000-0000-0000-000000000000';
select 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid in ('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
  '00000000-0000-0000-0000-000000000000');
select coalesce(null, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid);
select * from unnest('{ffffffff-ffff-ffff-ffff-ffffffffffff,00000000-0000-0000-0000-000000000000}'::uuid[]) u order by 1;
select min(id) from uu_t;
create table uu_d (id uuid default gen_random_uuid() primary key, v text);
insert into uu_d (v) values ('a'), ('b');
select count(distinct id), count(*) from uu_d;

-- case: uuid_hash_partitions
select uuid_hash('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'),
  uuid_hash_extended('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 0),
  uuid_hash_extended('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 1);
create table uu_h (k uuid, v int) partition by hash (k);
create table uu_h0 partition of uu_h for values with (modulus 4, remainder 0);
create table uu_h1 partition of uu_h for values with (modulus 4, remainder 1);
create table uu_h2 partition of uu_h for values with (modulus 4, remainder 2);
create table uu_h3 partition of uu_h for values with (modulus 4, remainder 3);
insert into uu_h select md5(g::text)::uuid, g from generate_series(1, 1000) g;
select tableoid::regclass, count(*), sum(v) from uu_h group by 1 order by 1;
explain (costs off) select * from uu_h where k = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11';
select satisfies_hash_partition('uu_h'::regclass, 4, 1, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid);
create index on uu_h (k);
select v from uu_h where k = md5('77')::uuid;
