\set id random(1, :rows)
select * from ps where id = :id;
