-- c) Revenue per product category over one day of orders (join + aggregate).
\set day random(0, 364)
select p.category, sum(l.qty * l.unit_price) as revenue, count(*) as lines
from orders o
join order_lines l on l.order_id = o.id
join products p on p.id = l.product_id
where o.created_at >= timestamp '2024-01-01' + cast(:day as int) * interval '1 day'
  and o.created_at < timestamp '2024-01-01' + (cast(:day as int) + 1) * interval '1 day'
group by p.category
order by revenue desc;
