-- The EXPLAIN corpus (tests/explain.rs): one `-- query: name` block per statement, run on
-- keel and on PostgreSQL 15 over schema.sql. Plans are chosen so that PostgreSQL 15's choice is
-- clear-cut: README.md lists each plan and its cost margin (check_corpus.py measures both).
-- EXPLAIN ANALYZE runs in the listed order, each statement rolled back; keep the DML last,
-- since a rolled-back write still clears visibility-map bits that later index-only scans see.

-- Single-table lookups: primary key, secondary index, index-only, bitmap.
-- query: pk_lookup
select * from customers where id = 42;
-- query: pk_lookup_columns
select id, status, amount from orders where id = 1234;
-- query: pk_in_list
select * from products where id in (3, 30, 300);
-- query: pk_range
select id, amount from orders where id between 100 and 180;
-- query: secondary_index_eq
select * from orders where customer_id = 17;
-- query: secondary_index_only
select customer_id from orders where customer_id = 17;
-- query: secondary_index_range
select id, created_at from orders where created_at >= '2024-03-01' and created_at < '2024-03-02';
-- query: composite_pk_prefix
select * from order_lines where order_id = 500;
-- query: bitmap_or
select id from orders where customer_id = 5 or customer_id = 6;

-- Sequential scans with filters.
-- query: seq_scan_filter
select * from orders where amount > 400;
-- query: seq_scan_text_filter
select id, name from customers where city = 'city 7';
-- query: seq_scan_no_index
select * from events where kind = 3 and id > 19000;

-- count(*), min and max.
-- query: count_star
select count(*) from events;
-- query: count_star_index_only
select count(*) from order_lines where product_id = 5;
-- query: max_via_index
select max(created_at) from orders;
-- query: min_via_pk
select min(id) from customers;
-- query: max_no_index
select max(amount) from orders;

-- ORDER BY with and without an index, LIMIT and OFFSET.
-- query: order_by_index_limit
select id, created_at from orders order by created_at limit 10;
-- query: order_by_index_desc_limit
select id, created_at from orders order by created_at desc limit 5;
-- query: order_by_pk
select * from customers order by id;
-- query: order_by_no_index
select id, amount from orders order by amount, id;
-- query: order_by_no_index_limit
select * from events order by note desc limit 10;
-- query: order_by_after_index_filter
select id, created_at from orders where customer_id = 5 order by created_at;
-- query: incremental_sort_limit
select id, created_at, amount from orders order by created_at, amount limit 10;
-- query: limit_offset
select id from orders order by id limit 10 offset 100;
-- query: limit_only
select * from order_lines limit 5;

-- Primary-key / foreign-key joins of two and three tables.
-- query: join_pk_fk_lookup
select o.id, o.amount, c.name from orders o join customers c on c.id = o.customer_id where o.id = 77;
-- query: join_customer_orders
select c.name, o.id, o.created_at from customers c join orders o on o.customer_id = c.id where c.id = 10;
-- query: join_hash_all
select c.city, o.amount from orders o join customers c on c.id = o.customer_id;
-- query: join3_order_by_id
select o.id, o.created_at, l.line_no, p.name, l.qty, p.price
from orders o join order_lines l on l.order_id = o.id join products p on p.id = l.product_id
where o.id = 500;
-- query: join3_category_filter
select count(*)
from order_lines l join orders o on o.id = l.order_id join products p on p.id = l.product_id
where p.category = 'category 3';
-- query: join_merge_ordered
select o.id, l.line_no, l.qty from orders o join order_lines l on l.order_id = o.id order by o.id, l.line_no;
-- query: join_one_day
select o.id, l.product_id, l.qty
from orders o join order_lines l on l.order_id = o.id
where o.created_at >= '2024-02-10' and o.created_at < '2024-02-11';
-- query: join_revenue_per_category
select p.category, sum(l.qty * p.price) as revenue
from order_lines l join products p on p.id = l.product_id
group by p.category order by revenue desc;

-- LEFT JOIN.
-- query: left_join_lookup
select c.name, o.id from customers c left join orders o on o.customer_id = c.id where c.id < 4;
-- query: left_join_filtered
select c.name, o.id from customers c left join orders o on o.customer_id = c.id and o.status = 'open' where c.city = 'city 3';
-- query: left_join_count
select c.id, count(o.id) from customers c left join orders o on o.customer_id = c.id group by c.id;
-- query: left_join_is_null
select c.id from customers c left join orders o on o.customer_id = c.id where o.id is null;

-- GROUP BY (HashAggregate, GroupAggregate), count(DISTINCT), DISTINCT.
-- query: group_by_low_cardinality
select status, count(*) from orders group by status;
-- query: group_by_index_order
select customer_id, count(*) from orders group by customer_id order by customer_id;
-- query: group_by_having
select product_id, sum(qty) from order_lines group by product_id having sum(qty) > 200;
-- query: group_by_expression_sorted
select date_trunc('month', created_at) as month, count(*), sum(amount) from orders group by 1 order by 1;
-- query: count_distinct
select count(distinct customer_id) from orders;
-- query: top_customers
select customer_id, count(*) as n from orders
where created_at >= '2024-03-01' and created_at < '2024-04-01'
group by customer_id order by n desc, customer_id limit 5;
-- query: distinct_hash
select distinct city from customers;
-- query: distinct_sorted
select distinct customer_id from orders order by customer_id;

-- UNION, UNION ALL.
-- query: union
select customer_id from orders where id < 100 union select id from customers where id < 50;
-- query: union_all
select id from customers where id < 5 union all select id from products where id < 5;

-- Subqueries: EXISTS / NOT EXISTS / IN / NOT IN (semi and anti joins), scalar, in FROM, CTE.
-- query: exists
select * from customers c where exists (select 1 from orders o where o.customer_id = c.id and o.amount > 495);
-- query: not_exists
select id from customers c where not exists (select 1 from orders o where o.customer_id = c.id and o.status = 'cancelled');
-- query: in_subquery
select * from products where id in (select product_id from order_lines where qty = 5);
-- query: in_subquery_unique
select count(*) from orders where customer_id in (select id from customers where city = 'city 7');
-- query: not_in_subquery
select id from products where id not in (select product_id from order_lines where qty = 5 and order_id < 200);
-- query: scalar_subquery
select c.id, (select count(*) from orders o where o.customer_id = c.id) as orders from customers c where c.id < 10;
-- query: subquery_in_from
select t.customer_id, t.n from (select customer_id, count(*) as n from orders group by customer_id) t where t.n > 3;
-- query: cte_inlined
with recent as (select * from orders where created_at >= '2024-12-01') select count(*) from recent where status = 'open';

-- INSERT, UPDATE, DELETE (EXPLAIN ANALYZE executes them; the test rolls each back).
-- query: insert_values
insert into orders values (10001, 1, 'open', '2025-01-01 10:00', 12.50);
-- query: insert_select
insert into events select id + 100000, kind, note from events where id <= 100;
-- query: update_by_pk
update orders set status = 'shipped' where id = 5;
-- query: update_seq
update products set price = price * 1.1 where category = 'category 3';
-- query: delete_by_pk_prefix
delete from order_lines where order_id = 9;
-- query: delete_in_subquery
delete from order_lines where product_id in (select id from products where category = 'category 4');
