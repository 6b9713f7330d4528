-- a) One order with its lines and their products, by order id (3-way join).
\set order_id random(1, :orders)
select o.id, o.created_at, o.status, l.line_no, p.name, p.category, l.qty, l.unit_price
from orders o
join order_lines l on l.order_id = o.id
join products p on p.id = l.product_id
where o.id = :order_id;
