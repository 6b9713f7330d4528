'use strict'
// node-postgres client for keel's driver test (crates/e2e/tests/drivers.rs).
//
// Usage: node arrays.js CONNECTION_STRING
//
// Round-trips int4[], int8[], text[] and float8[] through node-postgres: parameters as the
// driver sends them (array literals in text; a Buffer goes as a binary parameter), results in
// text (the default) and in binary (`binary: true`). It prints a transcript of what came back:
// each value as node-postgres parsed it, with its JavaScript type, and the bytes the server
// sent. The test runs it against keel and against PostgreSQL 15 and compares the transcripts,
// so nothing here states an expected value.

const pg = require('pg')

const TEXTS = [
  'plain',
  'a,b',
  'quote"d',
  'back\\slash',
  '{braces}',
  'with space',
  ' lead and trail ',
  'NULL',
  'null',
  'ünïcødé ☃ 𝄞',
  '',
  'new\nline\ttab',
]

// int8 values as strings: a JavaScript number cannot hold them exactly.
const ROWS = [
  [
    1,
    [1, -2, 2147483647, -2147483648, 0],
    ['0', '-1', '9223372036854775807', '-9223372036854775808', 4294967296],
    TEXTS,
    [0.5, NaN, Infinity, -Infinity, '-0', 1e-300, 1.7976931348623157e308, -2.5e-7],
  ],
  [2, [1, null, 3], [null, 42], [null, 'x', 'NULL'], [null, 1.5, null]],
  [3, [], [], [], []],
  [4, null, null, null, null],
  [5, [[1, 2], [3, null]], [[-5], [6]], [['a b', 'c,d'], ['"', '\\']], [[1.25, '-0'], [Infinity, 2]]],
]

function show(v) {
  if (v === null || v === undefined) return String(v)
  if (Array.isArray(v)) return '[' + v.map(show).join(', ') + ']'
  if (Buffer.isBuffer(v)) return 'Buffer:' + v.toString('hex')
  if (typeof v === 'number') return 'number:' + (Object.is(v, -0) ? '-0' : String(v))
  if (typeof v === 'string') return 'string:' + JSON.stringify(v)
  return typeof v + ':' + String(v)
}

// The raw value as node-postgres hands it to a type parser (a string for text, a Buffer for
// binary), so each row is shown both as bytes and as what the driver's own parser makes of
// them. node-postgres reads every DataRow field as a UTF-8 string first, so bytes of a binary
// value that are not valid UTF-8 reach the Buffer as U+FFFD: the driver's view, on both servers.
const rawTypes = { getTypeParser: () => (raw) => raw }

function wire(raw, format) {
  if (raw === null) return 'null'
  return format === 'binary' ? 'b:' + raw.toString('hex') : 't:' + raw
}

async function run(client, label, text, values = [], binary = false) {
  console.log('-- ' + label)
  try {
    // Without parameters node-postgres uses the simple protocol, whose results are text.
    const queryMode = binary ? 'extended' : undefined
    const res = await client.query({ text, values, binary, queryMode, types: rawTypes })
    if (res.fields.length === 0) {
      console.log(`status ${res.command} ${res.rowCount}`)
      return
    }
    console.log('columns ' + res.fields.map((f) => `${f.name}:${f.dataTypeID}:${f.format}`).join(', '))
    for (const row of res.rows) {
      const raws = res.fields.map((f) => row[f.name])
      const parsed = raws.map((raw, i) => {
        const f = res.fields[i]
        if (raw === null) return 'null'
        // A binary value that lost bytes to the UTF-8 decoding cannot be parsed meaningfully
        // (pg-types' array parser may loop on a garbled length).
        if (f.format === 'binary' && raw.toString().includes('\uFFFD')) return 'lossy'
        return show(pg.types.getTypeParser(f.dataTypeID, f.format)(raw))
      })
      console.log('row ' + parsed.join(' | '))
      console.log('wire ' + raws.map((raw, i) => wire(raw, res.fields[i].format)).join(' | '))
    }
    console.log(`rows ${res.rows.length}`)
  } catch (e) {
    console.log(`error ${e.code}: ${e.message}`)
  }
}

// array_send bytes of an int4[], sent as a binary parameter. `values` holds numbers, nulls,
// or Buffers (an element's raw bytes); `dims` is a list of [length, lower bound]; `ndim`,
// `flags` and `elemOid` default to what PostgreSQL sends; `tail` is appended.
function int4ArrayBinary(values, opts = {}) {
  const { dims = [[values.length, 1]], elemOid = 23, tail = Buffer.alloc(0) } = opts
  const header = Buffer.alloc(12 + 8 * dims.length)
  header.writeInt32BE(opts.ndim ?? dims.length, 0)
  header.writeInt32BE(opts.flags ?? (values.includes(null) ? 1 : 0), 4)
  header.writeUInt32BE(elemOid, 8)
  dims.forEach(([len, lb], i) => {
    header.writeInt32BE(len, 12 + 8 * i)
    header.writeInt32BE(lb, 16 + 8 * i)
  })
  const parts = [header]
  for (const v of values) {
    if (Buffer.isBuffer(v)) {
      const len = Buffer.alloc(4)
      len.writeInt32BE(v.length, 0)
      parts.push(len, v)
    } else {
      const e = Buffer.alloc(v === null ? 4 : 8)
      e.writeInt32BE(v === null ? -1 : 4, 0)
      if (v !== null) e.writeInt32BE(v, 4)
      parts.push(e)
    }
  }
  parts.push(tail)
  return Buffer.concat(parts)
}

const MAX = 2147483647

// Binary int4[] parameters as a client may build them, the malformed ones included; the
// server's answer (value or error) is compared, not assumed.
const BINARY_PARAMS = [
  ['plain', [-1, null, MAX], {}],
  ['lower bound 0', [7, 8, 9], { dims: [[3, 0]] }],
  ['two dimensions, lower bounds -1 and 5', [1, 2, 3, 4], { dims: [[2, -1], [2, 5]] }],
  ['no dimensions', [], { dims: [] }],
  ['a dimension of length 0', [], { dims: [[0, 1]] }],
  ['NULL element without the flag', [1, null], { flags: 0 }],
  ['flag without a NULL', [1, 2], { flags: 1 }],
  ['flags 2', [1], { flags: 2 }],
  ['ndim -1', [], { ndim: -1, dims: [] }],
  ['ndim 7', [1], { dims: [[1, 1], [1, 1], [1, 1], [1, 1], [1, 1], [1, 1], [1, 1]] }],
  ['element type int8', [1, 2], { elemOid: 20 }],
  ['element type text', [1], { elemOid: 25 }],
  ['element type 0', [1, 2], { elemOid: 0 }],
  ['element type 9999', [1], { elemOid: 9999 }],
  ['element type 12000', [1], { elemOid: 12000 }],
  ['element type 99999', [1], { elemOid: 99999 }],
  ['negative length', [], { dims: [[-1, 1]] }],
  ['length product past the maximum', [], { dims: [[65536, 1], [65536, 1]] }],
  ['upper bound just past int4', [1], { dims: [[1, MAX]] }],
  ['upper bound at int4 max', [1, 2], { dims: [[2, MAX - 1]] }],
  ['lower bound too large', [1, 2], { dims: [[2, MAX]] }],
  ['fewer elements than the length', [1], { dims: [[2, 1]] }],
  ['element length -2', [1], { tail: Buffer.from([0xff, 0xff, 0xff, 0xfe]), dims: [[2, 1]] }],
  ['element of 2 bytes', [Buffer.from([0, 1])], {}],
  ['element of 8 bytes', [Buffer.alloc(8, 1)], {}],
  ['element longer than the rest', [1], { tail: Buffer.from([0, 0, 0, 9, 1]), dims: [[2, 1]] }],
  ['a byte after the array', [1], { tail: Buffer.from([0]) }],
]

// Binary scalar parameters of the wrong size, beside the arrays' elements: a receive
// function that runs short, and one that leaves bytes over.
const BINARY_SCALARS = [
  ['int4', Buffer.from([0, 1])],
  ['int4', Buffer.from([0, 0, 0, 1, 0])],
  ['int8', Buffer.from([0, 0, 0, 1])],
  ['float8', Buffer.alloc(9)],
  ['bool', Buffer.alloc(0)],
  ['bool', Buffer.from([1, 1])],
]

async function roundTrip(client, binary) {
  const table = binary ? 'js_arrays_b' : 'js_arrays_t'
  await run(client, `${table}: drop`, `drop table if exists ${table}`)
  await run(client, `${table}: create`,
    `create table ${table} (id int4 primary key, i4 int4[], i8 int8[], t text[], f8 float8[])`)
  for (const row of ROWS) {
    await run(client, `${table}: insert id ${row[0]}`,
      `insert into ${table} values ($1, $2, $3, $4, $5)`, row)
  }
  await run(client, `${table}: select all`, `select id, i4, i8, t, f8 from ${table} order by id`,
    [], binary)
  await run(client, `${table}: as text`, `select id, i4::text, i8::text, t::text, f8::text,` +
    ` array_dims(i4), cardinality(t) from ${table} order by id`)
  for (const ids of [[1, 3, 4], [2], [], [5, null, 99], ['3', '1']]) {
    await run(client, `${table}: id = any(${JSON.stringify(ids)})`,
      `select id, t from ${table} where id = any($1) order by id`, [ids], binary)
  }
  await run(client, `${table}: id = any(binary int4[])`,
    `select id, i4 from ${table} where id = any($1) order by id`,
    [int4ArrayBinary([5, null, 2])], binary)
  for (const [what, values, opts] of BINARY_PARAMS) {
    await run(client, `${table}: binary int4[] parameter, ${what}`,
      'select $1::int4[] as a, array_dims($1::int4[]) as d', [int4ArrayBinary(values, opts)], binary)
  }
  for (const [type, bytes] of BINARY_SCALARS) {
    await run(client, `${table}: binary ${type} parameter of ${bytes.length} bytes`,
      `select 1 as one, $1::${type} as v`, [bytes], binary)
  }
  await run(client, `${table}: text && list`,
    `select id from ${table} where t && $1 order by id`, [['a,b', 'x']], binary)
  await run(client, `${table}: element = any(column)`,
    `select id from ${table} where $1 = any(t) order by id`, ['quote"d'], binary)
  await run(client, `${table}: int8 = any(column)`,
    `select id from ${table} where $1 = any(i8) order by id`, ['9223372036854775807'], binary)
  for (const row of ROWS) {
    await run(client, `${table}: echo parameters of row ${row[0]}`,
      'select $1::int4[], $2::int8[], $3::text[], $4::float8[]', row.slice(1), binary)
  }
  await run(client, `${table}: update with parameters`,
    `update ${table} set i4 = i4 || $1, t = $2 where id = $3`, [[7, 8], ['one', 'two, three'], 3])
  await run(client, `${table}: after update`, `select id, i4, t from ${table} where id = 3`, [],
    binary)
}

async function literals(client) {
  for (const binary of [false, true]) {
    const mode = binary ? 'binary' : 'text'
    await run(client, `multi-dimensional results (${mode})`,
      "select '{{1,2},{3,NULL}}'::int4[] as a, '{{{1}},{{2}}}'::int8[] as b," +
      " '{{\"a b\",\"c,d\"},{NULL,\"\\\\\"}}'::text[] as c," +
      " '{{1.5,NaN},{-0,Infinity}}'::float8[] as d," +
      ' array[array[1,2],array[3,4]] as e', [], binary)
    await run(client, `lower bounds (${mode})`,
      "select '[0:2]={7,8,9}'::int4[] as a, '[-1:0][1:1]={{1},{2}}'::int8[] as b," +
      " '{}'::text[] as c, array[]::float8[] as d", [], binary)
    await run(client, `specials (${mode})`,
      "select array['NaN','Infinity','-Infinity','-0','1e-300','4.9e-324']::float8[] as f," +
      ' array[-9223372036854775808, 9223372036854775807]::int8[] as i,' +
      " array[E'tab\\there', 'quote\"', 'NULL', NULL, '', ' ']::text[] as t", [], binary)
  }
}

async function main() {
  const client = new pg.Client({ connectionString: process.argv[2] })
  await client.connect()
  console.log('pg ' + require('pg/package.json').version)
  await roundTrip(client, false)
  await roundTrip(client, true)
  await literals(client)
  await client.end()
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
