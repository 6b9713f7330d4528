-- Seed 003: unlogged single table and unlogged 1024-way hash-partitioned table, {{rows}} rows each.
drop table if exists test;
create unlogged table test (id int primary key, info text, crt_time timestamp);
insert into test select generate_series(1,{{rows}}), md5(random()::text), clock_timestamp();
drop table if exists p;
create unlogged table p (id int primary key, info text, crt_time timestamp) partition by hash (id);
do language plpgsql $$
declare
begin
for i in 0..1023 loop
execute format('create unlogged table p_%s partition of p for values WITH (MODULUS 1024, REMAINDER %s)', i, i);
end loop;
end;
$$;
insert into p select generate_series(1,{{rows}}), md5(random()::text), clock_timestamp();
vacuum analyze test;
vacuum analyze p;
