-- A table hash-partitioned :parts ways, :rows rows (seed 003's layout).
drop table if exists ps;
create unlogged table ps (id int primary key, info text, crt_time timestamp) partition by hash (id);
select format('create unlogged table ps_%s partition of ps for values with (modulus %s, remainder %s)', i, :parts, i)
  from generate_series(0, :parts - 1) i \gexec
insert into ps select generate_series(1, :rows), md5(random()::text), clock_timestamp();
vacuum analyze ps;
