//! User-defined functions across a SIGKILL: functions created (one before a CHECKPOINT, the
//! others only in the log), replaced and dropped are recovered from the catalog changes the
//! commit records carry, and stay callable after the restart; so are triggers, with their
//! arguments and whether they are enabled.

use keel_e2e::Server;

#[test]
fn functions_survive_a_sigkill() {
    let mut srv = Server::start(&[("checkpoint_timeout", "3600")]);
    srv.query("create function before_ckpt(a int) returns int language sql as 'select a + 1'");
    srv.query("checkpoint");
    srv.query(
        "create or replace function gen_rand_str(int) returns text as $function$
  select string_agg(a[(random()*6)::int+1], '') from generate_series(1,$1), (select array['a','b','c','d','e','f','g']) t(a);
$function$ language sql strict",
    );
    srv.query("create function twice(x text) returns text language sql as 'select x || x'");
    srv.query("create function twice(x int) returns int language sql as 'select x * 2'");
    srv.query("create or replace function before_ckpt(a int) returns int language sql as 'select a + 100'");
    srv.query("create function dropped() returns int language sql as 'select 1'");
    srv.query("drop function dropped()");
    srv.query(
        "begin; create function rolled_back() returns int language sql as 'select 1'; rollback",
    );
    // A trigger and its PL/pgSQL function, and a disabled one, only in the log.
    srv.query("create table stamped (id int, note text)");
    srv.query(
        "create function stamp_note() returns trigger language plpgsql as \
         $$ begin new.note := 'stamped ' || tg_argv[0]; return new; end $$",
    );
    srv.query(
        "create trigger a_stamp before insert on stamped for each row \
         execute function stamp_note('v1')",
    );
    srv.query(
        "create trigger b_skip before insert on stamped for each row \
         execute function stamp_note('v2')",
    );
    srv.query("alter table stamped disable trigger b_skip");

    srv.crash();
    srv.restart();

    assert_eq!(srv.query("select length(gen_rand_str(64))"), "64");
    assert_eq!(srv.query("select twice('ab'), twice(21)"), "abab|42");
    assert_eq!(srv.query("select before_ckpt(1)"), "101");
    srv.query("insert into stamped (id) values (1)");
    assert_eq!(srv.query("select note from stamped"), "stamped v1");
    for gone in ["select dropped()", "select rolled_back()"] {
        let r = srv.psql(&["-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", gone]);
        assert!(!r.success(), "{gone} answered after the crash");
    }
}
