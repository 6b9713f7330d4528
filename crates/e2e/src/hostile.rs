//! Generated hostile input: SQL from a small grammar that favours what breaks servers (deep
//! nesting, long operator chains, huge lists, edge-case literals and casts) and protocol frames
//! with valid tags and plausible but wrong bodies. Deterministic for a seed, so a failure is
//! reproduced by its seed.

/// xorshift64*: small, fast, and reproducible from its seed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    /// A size between 1 and `max`, spread evenly over orders of magnitude.
    pub fn size(&mut self, max: usize) -> usize {
        let bits = usize::BITS - max.leading_zeros();
        let b = 1 + self.below(bits as usize);
        (1 + self.below(1 << b)).min(max)
    }

    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

const LITERALS: &[&str] = &[
    "0",
    "1",
    "-1",
    "2147483647",
    "-2147483648",
    "9223372036854775807",
    "(-9223372036854775808)::int8",
    "32767::int2",
    "(-32768)::int2",
    "1.5",
    "-0.0",
    "1e308",
    "1e-308",
    "'NaN'::float8",
    "'Infinity'::float8",
    "'-Infinity'::numeric",
    "'NaN'::numeric",
    "99999999999999999999999999999999.999999",
    "0.000000000000000000001",
    "(-1.0)",
    "10::numeric",
    "null",
    "true",
    "false",
    "'a'",
    "''",
    "'x''y'",
    "E'\\\\x00'",
    "'5874897-12-31'::date",
    "'4714-11-24 BC'::date",
    "'294276-12-31 23:59:59'::timestamp",
    "'infinity'::timestamp",
    "'1 day'::interval",
    "'-178000000 years'::interval",
    "'\\xdeadbeef'::bytea",
    "'{}'",
];

const BINARY_OPS: &[&str] = &[
    "+", "-", "*", "/", "%", "^", "||", "=", "<>", "<", ">=", "and", "or", "&", "|", "#", "<<",
    ">>",
];

const CASTS: &[&str] = &[
    "int2",
    "int4",
    "int8",
    "numeric",
    "numeric(5,2)",
    "float4",
    "float8",
    "text",
    "varchar(3)",
    "char(2)",
    "bool",
    "date",
    "timestamp",
    "timestamptz",
    "interval",
    "uuid",
    "bytea",
];

const FUNCS: &[&str] = &[
    "abs", "length", "upper", "md5", "sqrt", "exp", "ln", "round", "trunc", "coalesce", "nullif",
    "greatest", "least", "mod", "power", "lpad", "substr", "repeat", "sign", "ceil", "floor",
];

/// A random scalar expression, at most `depth` levels deep (before the big shapes below).
pub fn expr(rng: &mut Rng, depth: usize) -> String {
    if depth == 0 || rng.chance(30) {
        return rng.pick(LITERALS).to_string();
    }
    let d = depth - 1;
    match rng.below(9) {
        0 => format!(
            "({} {} {})",
            expr(rng, d),
            rng.pick(BINARY_OPS),
            expr(rng, d)
        ),
        1 => format!("-({})", expr(rng, d)),
        2 => format!("({})::{}", expr(rng, d), rng.pick(CASTS)),
        3 => format!("{}({})", rng.pick(FUNCS), expr(rng, d)),
        4 => format!("{}({}, {})", rng.pick(FUNCS), expr(rng, d), expr(rng, d)),
        5 => format!(
            "case when {} then {} else {} end",
            expr(rng, d),
            expr(rng, d),
            expr(rng, d)
        ),
        6 => format!("({}) in ({}, {})", expr(rng, d), expr(rng, d), expr(rng, d)),
        7 => format!("(select {})", expr(rng, d)),
        _ => format!("({}) is distinct from ({})", expr(rng, d), expr(rng, d)),
    }
}

/// One hostile statement: a big shape (deep or long) around small random expressions.
pub fn statement(rng: &mut Rng) -> String {
    let small = expr(rng, 3);
    match rng.below(10) {
        0 => {
            let n = rng.size(20_000);
            format!("select {}{}{}", "(".repeat(n), small, ")".repeat(n))
        }
        1 => {
            let n = rng.size(20_000);
            let op = rng.pick(BINARY_OPS);
            let term = if rng.chance(50) {
                "1".to_string()
            } else {
                small
            };
            format!("select {}", vec![term; n].join(&format!(" {op} ")))
        }
        2 => {
            let n = rng.size(10_000);
            format!("select {}{}", "-".repeat(n).replace("--", "- -"), small)
        }
        3 => {
            let n = rng.size(2_000);
            let mut s = small;
            for _ in 0..n {
                s = format!("case when true then {s} end");
            }
            format!("select {s}")
        }
        4 => {
            let n = rng.size(2_000);
            format!("select {}{}{}", "(select ".repeat(n), small, ")".repeat(n))
        }
        5 => {
            let n = rng.size(300_000);
            let list: Vec<String> = (0..n).map(|i| i.to_string()).collect();
            format!("select 7 in ({})", list.join(","))
        }
        6 => {
            let n = rng.size(30_000);
            let branch = format!("select {small}");
            format!(
                "select count(*) from ({}) s",
                vec![branch; n].join(" union all ")
            )
        }
        7 => {
            let n = rng.size(5_000);
            format!("select {}{}{}", "abs(".repeat(n), small, ")".repeat(n))
        }
        8 => {
            let n = rng.size(3_000);
            let cols: Vec<String> = (0..n).map(|i| format!("{small} as c{i}")).collect();
            format!("select {}", cols.join(", "))
        }
        _ => format!("select {}", expr(rng, 8)),
    }
}

fn frame(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut v = vec![tag];
    v.extend_from_slice(&((body.len() + 4) as u32).to_be_bytes());
    v.extend_from_slice(body);
    v
}

fn cstring(rng: &mut Rng, out: &mut Vec<u8>) {
    let n = rng.size(64);
    for _ in 0..n {
        out.push(b'a' + rng.below(26) as u8);
    }
    if rng.chance(90) {
        out.push(0);
    }
}

fn int16(rng: &mut Rng, out: &mut Vec<u8>) {
    let v: u16 = match rng.below(4) {
        0 => 0,
        1 => rng.below(4) as u16,
        2 => u16::MAX,
        _ => rng.next_u64() as u16,
    };
    out.extend_from_slice(&v.to_be_bytes());
}

fn int32(rng: &mut Rng, out: &mut Vec<u8>) {
    let v: i32 = match rng.below(4) {
        0 => -1,
        1 => rng.below(16) as i32,
        2 => i32::MAX,
        _ => rng.next_u64() as i32,
    };
    out.extend_from_slice(&v.to_be_bytes());
}

/// A frontend message with a valid tag and a body built from the fields such messages carry
/// (strings, counts, lengths), in random amounts: mostly wrong in a way a decoder must catch.
pub fn protocol_frame(rng: &mut Rng) -> Vec<u8> {
    let tag = *rng.pick(b"QPBEDCSHFdcfpX");
    let mut body = Vec::new();
    for _ in 0..rng.size(12) {
        match rng.below(4) {
            0 => cstring(rng, &mut body),
            1 => int16(rng, &mut body),
            2 => int32(rng, &mut body),
            _ => body.push(rng.next_u64() as u8),
        }
    }
    frame(tag, &body)
}
