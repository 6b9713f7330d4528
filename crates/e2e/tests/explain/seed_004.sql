-- Seed 004's first table (bench/seeds/s004_sort: 10M rows of one repeated 60-character text),
-- scaled down to 100,000 rows: still more than work_mem (4MB) holds, so its sort spills
-- ("external merge") as in the seed. VACUUM sets hint bits and the visibility map, so the
-- EXPLAIN's scan reads only clean pages ("shared hit", nothing "dirtied").
create table test(id int, info text);
insert into test select generate_series(1,100000), '111111111111111111111111111111111111111111111111111111111111';
vacuum analyze test;
