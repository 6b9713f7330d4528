//! The syntax tree of a PL/pgSQL body.
//!
//! Embedded SQL is never parsed here: every expression and statement is a [`SqlText`], the
//! source text PostgreSQL's `read_sql_construct` would have collected, for the interpreter to
//! hand to the SQL parser (expressions as `SELECT <text>`).

use crate::conditions::Condition;

/// A piece of embedded SQL, cut from the body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SqlText {
    /// The source text, without the terminator and without trailing whitespace or comments.
    /// For a SQL statement with an `INTO` clause, the clause is blanked out with spaces so
    /// positions in `text` still match the body.
    pub text: String,
    /// Byte offset of `text` in the body.
    pub offset: usize,
    /// 1-based line of `offset` in the body.
    pub line: u32,
}

/// What `parse_*` returns: the outermost block and the `#option` directives before it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Body {
    pub block: Block,
    pub options: CompileOptions,
}

/// `#variable_conflict`, `#print_strict_params`, `#option dump`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompileOptions {
    pub variable_conflict: Option<VariableConflict>,
    pub print_strict_params: Option<bool>,
    pub dump: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VariableConflict {
    Error,
    UseVariable,
    UseColumn,
}

/// `[<<label>>] [DECLARE decls] BEGIN body [EXCEPTION handlers] END [label]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    pub label: Option<String>,
    /// Line of BEGIN (PostgreSQL's line for a block).
    pub line: u32,
    pub decls: Vec<Decl>,
    pub body: Vec<Stmt>,
    /// `None` without an EXCEPTION section; a section always has at least one handler.
    pub exceptions: Option<Vec<ExceptionHandler>>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExceptionHandler {
    /// Line of the WHEN.
    pub line: u32,
    /// `WHEN a OR b OR SQLSTATE 'xxxxx'`.
    pub conditions: Vec<Condition>,
    pub body: Vec<Stmt>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decl {
    Var(VarDecl),
    /// `name ALIAS FOR target`, target a `$n`, a name or a dotted name.
    Alias {
        name: String,
        line: u32,
        offset: usize,
        target: Vec<String>,
    },
    /// `name [[NO] SCROLL] CURSOR [(arg type, ...)] {FOR | IS} query`.
    Cursor(CursorDecl),
}

/// `name [CONSTANT] type [COLLATE c] [NOT NULL] [{DEFAULT | := | =} expr]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VarDecl {
    pub name: String,
    pub line: u32,
    /// Byte offset of the name.
    pub offset: usize,
    pub constant: bool,
    pub data_type: DataType,
    /// The collation name as written, downcased unless quoted; dotted names joined with `.`.
    pub collate: Option<String>,
    pub not_null: bool,
    pub default: Option<SqlText>,
}

/// A declared type, kept as text for the SQL layer to resolve.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataType {
    /// The text as written: `int`, `numeric(10, 2)`, `int[]`, `t.c%TYPE`, `record`.
    pub text: SqlText,
    pub kind: TypeKind,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TypeKind {
    /// A type name for the SQL layer (including `record`).
    Named,
    /// `name[.name...]%TYPE`: the type of a variable or a column.
    TypeOf(Vec<String>),
    /// `name[.name]%ROWTYPE`: a table's row type.
    RowTypeOf(Vec<String>),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CursorDecl {
    pub name: String,
    pub line: u32,
    pub offset: usize,
    /// `Some(true)` for SCROLL, `Some(false)` for NO SCROLL.
    pub scroll: Option<bool>,
    /// `(name type, ...)`.
    pub args: Vec<(String, DataType)>,
    pub query: SqlText,
}

/// A statement, with PostgreSQL's line number (the line of its first keyword; for a labelled
/// loop, the line of LOOP/WHILE/FOR/FOREACH rather than of the label).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stmt {
    pub line: u32,
    /// Byte offset of the statement's first token (after any label).
    pub offset: usize,
    pub kind: StmtKind,
}

/// A variable reference as written: `x`, `r.f`, `$1`, `"Q"`. Names are downcased unless
/// quoted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VarRef {
    pub names: Vec<String>,
    pub offset: usize,
}

/// An assignment target: `a`, `a.b`, `a[i]`, `a[i][j].f`, `$1`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AssignTarget {
    /// The base variable (first name).
    pub name: String,
    pub path: Vec<TargetPart>,
    /// The target as written, up to the assignment operator.
    pub text: SqlText,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TargetPart {
    Field(String),
    /// The text between `[` and `]`, which may be a slice `lo:hi`.
    Subscript(SqlText),
}

/// `INTO [STRICT] target [, target ...]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Into {
    pub strict: bool,
    pub targets: Vec<VarRef>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElsIf {
    pub line: u32,
    pub cond: SqlText,
    pub body: Vec<Stmt>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaseWhen {
    pub line: u32,
    /// For a simple CASE, the WHEN value list as written (`1, 2` means either).
    pub expr: SqlText,
    pub body: Vec<Stmt>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum RaiseLevel {
    Debug,
    Log,
    Info,
    Notice,
    Warning,
    Exception,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RaiseCondition {
    /// A condition name, validated against the condition table.
    Name(String),
    SqlState(String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RaiseOptionKind {
    Errcode,
    Message,
    Detail,
    Hint,
    Column,
    Constraint,
    Datatype,
    Table,
    Schema,
}

impl RaiseOptionKind {
    /// The option's name as PostgreSQL prints it ("RAISE option already specified: %s").
    pub fn name(self) -> &'static str {
        match self {
            RaiseOptionKind::Errcode => "ERRCODE",
            RaiseOptionKind::Message => "MESSAGE",
            RaiseOptionKind::Detail => "DETAIL",
            RaiseOptionKind::Hint => "HINT",
            RaiseOptionKind::Column => "COLUMN",
            RaiseOptionKind::Constraint => "CONSTRAINT",
            RaiseOptionKind::Datatype => "DATATYPE",
            RaiseOptionKind::Table => "TABLE",
            RaiseOptionKind::Schema => "SCHEMA",
        }
    }
}

/// `RAISE [level] ['format' [, args]] [USING opt = expr, ...]`, `RAISE level condition`,
/// `RAISE level SQLSTATE 'xxxxx'`. A bare `RAISE;` (re-throw) has level Exception and no
/// condition, message or options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Raise {
    pub level: RaiseLevel,
    pub condition: Option<RaiseCondition>,
    /// The format string's value (quotes and escapes removed). Its `%` count matches
    /// `params` (checked here, as PostgreSQL does at compile time).
    pub message: Option<String>,
    pub params: Vec<SqlText>,
    pub options: Vec<(RaiseOptionKind, SqlText)>,
}

impl Raise {
    /// `RAISE;` inside an exception handler: re-throw the error being handled.
    pub fn is_rethrow(&self) -> bool {
        self.condition.is_none() && self.message.is_none() && self.options.is_empty()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiagItem {
    RowCount,
    PgContext,
    PgExceptionContext,
    PgExceptionDetail,
    PgExceptionHint,
    ReturnedSqlstate,
    ColumnName,
    ConstraintName,
    PgDatatypeName,
    MessageText,
    TableName,
    SchemaName,
}

impl DiagItem {
    /// The item's name as PostgreSQL prints it.
    pub fn name(self) -> &'static str {
        match self {
            DiagItem::RowCount => "ROW_COUNT",
            DiagItem::PgContext => "PG_CONTEXT",
            DiagItem::PgExceptionContext => "PG_EXCEPTION_CONTEXT",
            DiagItem::PgExceptionDetail => "PG_EXCEPTION_DETAIL",
            DiagItem::PgExceptionHint => "PG_EXCEPTION_HINT",
            DiagItem::ReturnedSqlstate => "RETURNED_SQLSTATE",
            DiagItem::ColumnName => "COLUMN_NAME",
            DiagItem::ConstraintName => "CONSTRAINT_NAME",
            DiagItem::PgDatatypeName => "PG_DATATYPE_NAME",
            DiagItem::MessageText => "MESSAGE_TEXT",
            DiagItem::TableName => "TABLE_NAME",
            DiagItem::SchemaName => "SCHEMA_NAME",
        }
    }
}

/// How an OPEN gets its query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpenSource {
    /// `OPEN c [(args)]` on a cursor declared with a query; `args` is the text inside the
    /// parentheses.
    Bound { args: Option<SqlText> },
    /// `OPEN c [[NO] SCROLL] FOR query`.
    Query {
        scroll: Option<bool>,
        query: SqlText,
    },
    /// `OPEN c [[NO] SCROLL] FOR EXECUTE expr [USING args]`.
    Execute {
        scroll: Option<bool>,
        query: SqlText,
        params: Vec<SqlText>,
    },
}

/// FETCH/MOVE direction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FetchDirection {
    Next,
    Prior,
    First,
    Last,
    Absolute(SqlText),
    Relative(SqlText),
    All,
    Forward(Option<SqlText>),
    ForwardAll,
    Backward(Option<SqlText>),
    BackwardAll,
    /// A bare count (`FETCH 3 FROM c`).
    Count(SqlText),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StmtKind {
    Block(Block),
    /// `target := expr;` or `target = expr;`. `expr` may be empty (PostgreSQL then fails at
    /// run time: "assignment source returned 0 columns").
    Assign {
        target: AssignTarget,
        expr: SqlText,
    },
    If {
        cond: SqlText,
        then_body: Vec<Stmt>,
        elsifs: Vec<ElsIf>,
        else_body: Option<Vec<Stmt>>,
    },
    /// Simple (`expr` is `Some`) or searched CASE. Without ELSE, no branch matching raises
    /// 20000 case_not_found at run time.
    Case {
        expr: Option<SqlText>,
        whens: Vec<CaseWhen>,
        else_body: Option<Vec<Stmt>>,
    },
    Loop {
        label: Option<String>,
        body: Vec<Stmt>,
    },
    While {
        label: Option<String>,
        cond: SqlText,
        body: Vec<Stmt>,
    },
    /// `FOR var IN [REVERSE] lower .. upper [BY step] LOOP`; `var` is a new integer variable
    /// local to the loop.
    ForInt {
        label: Option<String>,
        var: String,
        var_offset: usize,
        reverse: bool,
        lower: SqlText,
        upper: SqlText,
        step: Option<SqlText>,
        body: Vec<Stmt>,
    },
    /// `FOR targets IN query LOOP`.
    ForQuery {
        label: Option<String>,
        targets: Vec<VarRef>,
        query: SqlText,
        body: Vec<Stmt>,
    },
    /// `FOR targets IN EXECUTE expr [USING args] LOOP`.
    ForExecute {
        label: Option<String>,
        targets: Vec<VarRef>,
        query: SqlText,
        params: Vec<SqlText>,
        body: Vec<Stmt>,
    },
    /// `FOR rec IN cursor [(args)] LOOP` over a bound cursor.
    ForCursor {
        label: Option<String>,
        var: String,
        cursor: VarRef,
        args: Option<SqlText>,
        body: Vec<Stmt>,
    },
    /// `FOREACH targets [SLICE n] IN ARRAY expr LOOP`.
    Foreach {
        label: Option<String>,
        targets: Vec<VarRef>,
        slice: i32,
        array: SqlText,
        body: Vec<Stmt>,
    },
    /// EXIT (`is_exit`) or CONTINUE, `[label] [WHEN cond]`. The label, if any, is known to
    /// name an enclosing block or loop (a loop for CONTINUE).
    Exit {
        is_exit: bool,
        label: Option<String>,
        cond: Option<SqlText>,
    },
    Return {
        expr: Option<SqlText>,
    },
    ReturnNext {
        expr: Option<SqlText>,
    },
    /// `RETURN QUERY query` (`params` empty, `dynamic` false) or `RETURN QUERY EXECUTE expr
    /// [USING args]`.
    ReturnQuery {
        dynamic: bool,
        query: SqlText,
        params: Vec<SqlText>,
    },
    Raise(Raise),
    Assert {
        cond: SqlText,
        message: Option<SqlText>,
    },
    /// `EXECUTE expr [INTO [STRICT] targets] [USING args]`.
    Execute {
        query: SqlText,
        into: Option<Into>,
        params: Vec<SqlText>,
    },
    /// `PERFORM query`: `query` is the text after PERFORM; run it as `SELECT <query>`.
    Perform {
        query: SqlText,
    },
    /// Any other SQL statement (SELECT, INSERT, UPDATE, DELETE, MERGE, CREATE, SET, ...),
    /// with its `INTO` clause taken out.
    Sql {
        sql: SqlText,
        into: Option<Into>,
    },
    GetDiagnostics {
        stacked: bool,
        items: Vec<(VarRef, DiagItem)>,
    },
    Open {
        cursor: VarRef,
        source: OpenSource,
    },
    /// FETCH (`is_move` false) or MOVE.
    Fetch {
        is_move: bool,
        direction: FetchDirection,
        cursor: VarRef,
        into: Option<Into>,
    },
    Close {
        cursor: VarRef,
    },
    /// `NULL;` (PostgreSQL drops it from the tree; it is kept here for line accounting).
    Null,
    Commit {
        chain: bool,
    },
    Rollback {
        chain: bool,
    },
    /// `CALL ...` or `DO ...` (`is_call` false), the whole statement text including the
    /// keyword.
    Call {
        is_call: bool,
        sql: SqlText,
    },
}

impl Stmt {
    /// The statement's name in PostgreSQL's CONTEXT lines (`plpgsql_stmt_typename`).
    pub fn kind_name(&self) -> &'static str {
        match &self.kind {
            StmtKind::Block(_) => "statement block",
            StmtKind::Assign { .. } => "assignment",
            StmtKind::If { .. } => "IF",
            StmtKind::Case { .. } => "CASE",
            StmtKind::Loop { .. } => "LOOP",
            StmtKind::While { .. } => "WHILE",
            StmtKind::ForInt { .. } => "FOR with integer loop variable",
            StmtKind::ForQuery { .. } => "FOR over SELECT rows",
            StmtKind::ForCursor { .. } => "FOR over cursor",
            StmtKind::ForExecute { .. } => "FOR over EXECUTE statement",
            StmtKind::Foreach { .. } => "FOREACH over array",
            StmtKind::Exit { is_exit: true, .. } => "EXIT",
            StmtKind::Exit { is_exit: false, .. } => "CONTINUE",
            StmtKind::Return { .. } => "RETURN",
            StmtKind::ReturnNext { .. } => "RETURN NEXT",
            StmtKind::ReturnQuery { .. } => "RETURN QUERY",
            StmtKind::Raise(_) => "RAISE",
            StmtKind::Assert { .. } => "ASSERT",
            StmtKind::Execute { .. } => "EXECUTE",
            StmtKind::Perform { .. } => "PERFORM",
            StmtKind::Sql { .. } => "SQL statement",
            StmtKind::GetDiagnostics { stacked: false, .. } => "GET DIAGNOSTICS",
            StmtKind::GetDiagnostics { stacked: true, .. } => "GET STACKED DIAGNOSTICS",
            StmtKind::Open { .. } => "OPEN",
            StmtKind::Fetch { is_move: false, .. } => "FETCH",
            StmtKind::Fetch { is_move: true, .. } => "MOVE",
            StmtKind::Close { .. } => "CLOSE",
            StmtKind::Null => "NULL",
            StmtKind::Commit { .. } => "COMMIT",
            StmtKind::Rollback { .. } => "ROLLBACK",
            StmtKind::Call { is_call: true, .. } => "CALL",
            StmtKind::Call { is_call: false, .. } => "DO",
        }
    }
}
