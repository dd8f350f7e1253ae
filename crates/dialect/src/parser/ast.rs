//! The statements Tributary parses itself, with a span on every node. Everything else is a
//! [`Statement::Query`] handed to DataFusion.

use datafusion::sql::sqlparser::ast::{DataType, Expr};
use tributary_types::{Span, SqlOption};

/// A name as written, normalised like DataFusion does (unquoted names are lowercased).
#[derive(Debug, Clone, PartialEq)]
pub struct Name {
    /// The normalised name.
    pub value: String,
    /// Where it is.
    pub span: Span,
}

/// One statement of a script.
#[derive(Debug, Clone)]
pub struct ParsedStatement {
    /// What it is.
    pub statement: Statement,
    /// Where it is in the script.
    pub span: Span,
    /// Its text (without the terminating semicolon).
    pub text: String,
}

/// `CREATE [TEMPORARY] TABLE`.
#[derive(Debug, Clone)]
pub struct CreateTable {
    /// The table name.
    pub name: Name,
    /// `TEMPORARY`: a lookup table.
    pub temporary: bool,
    /// `IF NOT EXISTS`.
    pub if_not_exists: bool,
    /// Columns in declaration order.
    pub columns: Vec<ColumnDef>,
    /// `*` in the column list: every column of the table's schema document, standing
    /// before the column at this index; and where it is written.
    pub star: Option<(usize, Span)>,
    /// Table-level `PRIMARY KEY (a, b)`.
    pub primary_key: Vec<Name>,
    /// `WATERMARK FOR col [AS expr]`, each one given (more than one is an error).
    pub watermarks: Vec<WatermarkDef>,
    /// The WITH options.
    pub options: Vec<SqlOption>,
    /// Where the WITH clause is (the whole statement when there is none).
    pub with_span: Span,
    /// Whether a WITH clause was written.
    pub has_with: bool,
    /// `PARTITIONED BY (...)` expressions.
    pub partitioned_by: Vec<(Expr, Span)>,
    /// How deep the statement nests (brackets and operator chains, as the parser's shape
    /// check measures it): building the table recurses about this deep.
    pub depth: usize,
}

/// One column definition.
#[derive(Debug, Clone)]
pub struct ColumnDef {
    /// The column name.
    pub name: Name,
    /// The SQL type.
    pub data_type: DataType,
    /// Where the type is.
    pub type_span: Span,
    /// `NOT NULL`.
    pub not_null: bool,
    /// Column-level `PRIMARY KEY`.
    pub primary_key: bool,
    /// `METADATA FROM 'key'` (or the older `GENERATED ALWAYS AS (metadata('key')) STORED`).
    pub metadata_key: Option<(String, Span)>,
    /// `GENERATED ALWAYS AS (expr) [STORED]`.
    pub generated: Option<Generated>,
    /// The whole definition.
    pub span: Span,
}

/// A virtual column's expression.
#[derive(Debug, Clone)]
pub struct Generated {
    /// The expression.
    pub expr: Expr,
    /// Where it is.
    pub span: Span,
    /// `STORED` was written.
    pub stored: bool,
}

/// `WATERMARK FOR column [AS expr]`.
#[derive(Debug, Clone)]
pub struct WatermarkDef {
    /// The event-time column.
    pub column: Name,
    /// The watermark expression.
    pub expr: Option<(Expr, Span)>,
    /// The whole clause.
    pub span: Span,
}

/// `DROP ... [RESTRICT | CASCADE]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DropBehavior {
    /// Refuse when something depends on the object (the default).
    #[default]
    Restrict,
    /// Drop the dependents too.
    Cascade,
}

/// A query inside another statement (a view's, `CREATE TABLE .. AS`'s): its text as
/// written and where it is.
#[derive(Debug, Clone)]
pub struct QueryText {
    /// The query's text.
    pub text: String,
    /// Where it is.
    pub span: Span,
}

/// `CREATE [OR REPLACE] VIEW [IF NOT EXISTS] name [(columns)] AS query`.
#[derive(Debug, Clone)]
pub struct CreateView {
    /// The view's name.
    pub name: Name,
    /// `OR REPLACE`.
    pub or_replace: bool,
    /// `IF NOT EXISTS`.
    pub if_not_exists: bool,
    /// Names given to its columns, if any.
    pub columns: Vec<Name>,
    /// Its query.
    pub query: QueryText,
}

/// `CREATE [OR REPLACE] [AGGREGATE | ASYNC] FUNCTION name(args) RETURNS type`.
#[derive(Debug, Clone)]
pub struct CreateFunction {
    /// The function's name.
    pub name: Name,
    /// `OR REPLACE`.
    pub or_replace: bool,
    /// `IF NOT EXISTS`.
    pub if_not_exists: bool,
    /// Its arguments, result and kind.
    pub signature: tributary_types::FunctionSignature,
    /// Where the result type (and what follows it) is.
    pub returns_span: Span,
}

/// What a script statement is.
#[derive(Debug, Clone)]
pub enum Statement {
    /// `CREATE [TEMPORARY] TABLE ... WITH (...)`.
    CreateTable(Box<CreateTable>),
    /// `CREATE CONNECTION PROFILE [IF NOT EXISTS] name WITH (...)`.
    CreateProfile {
        /// The profile name.
        name: Name,
        /// `IF NOT EXISTS`.
        if_not_exists: bool,
        /// The options.
        options: Vec<SqlOption>,
        /// Where the WITH clause is.
        with_span: Span,
    },
    /// `ALTER CONNECTION PROFILE name SET (...)`.
    AlterProfile {
        /// The profile name.
        name: Name,
        /// The options to set.
        options: Vec<SqlOption>,
        /// Where the SET clause is.
        with_span: Span,
    },
    /// `DROP CONNECTION PROFILE [IF EXISTS] name [RESTRICT | CASCADE]`.
    DropProfile {
        /// The profile name.
        name: Name,
        /// `IF EXISTS`.
        if_exists: bool,
        /// RESTRICT or CASCADE.
        behavior: DropBehavior,
    },
    /// `DROP TABLE [IF EXISTS] name [, ...] [RESTRICT | CASCADE]`.
    DropTable {
        /// The table names.
        names: Vec<Name>,
        /// `IF EXISTS`.
        if_exists: bool,
        /// CASCADE drops the views that read them too.
        behavior: DropBehavior,
    },
    /// `CREATE [OR REPLACE] VIEW`.
    CreateView(Box<CreateView>),
    /// `DROP VIEW [IF EXISTS] name [, ...] [RESTRICT | CASCADE]`.
    DropView {
        /// The view names.
        names: Vec<Name>,
        /// `IF EXISTS`.
        if_exists: bool,
        /// CASCADE drops the views that read them too.
        behavior: DropBehavior,
    },
    /// `SHOW VIEWS`.
    ShowViews,
    /// `SHOW CREATE VIEW name`.
    ShowCreateView(Name),
    /// `CREATE TABLE name AS query`: a named result for the rest of the script.
    CreateTableAs {
        /// The name.
        name: Name,
        /// The query.
        query: QueryText,
    },
    /// `CREATE [OR REPLACE] [AGGREGATE | ASYNC] FUNCTION`.
    CreateFunction(Box<CreateFunction>),
    /// `DROP FUNCTION [IF EXISTS] name`.
    DropFunction {
        /// The function's name.
        name: Name,
        /// `IF EXISTS`.
        if_exists: bool,
    },
    /// `SHOW TABLES`.
    ShowTables,
    /// `SHOW CONNECTION PROFILES`.
    ShowProfiles,
    /// `SHOW TOPICS IN [CONNECTION] PROFILE name`: the names a table of the profile can
    /// use (Kafka topics, Redis key prefixes), found by connecting.
    ShowTopics(Name),
    /// `SHOW DIRECTORIES IN 'path'`: the subdirectories of a local path, for filesystem
    /// tables (which have no profile).
    ShowDirectories {
        /// The path as written.
        path: String,
        /// Where the path is.
        span: Span,
    },
    /// `SHOW CONNECTORS`.
    ShowConnectors,
    /// `SHOW CREATE TABLE name`.
    ShowCreateTable(Name),
    /// `SHOW CREATE CONNECTION PROFILE name`.
    ShowCreateProfile(Name),
    /// `DESCRIBE [TABLE] name`.
    DescribeTable(Name),
    /// `DESCRIBE CONNECTION PROFILE name`.
    DescribeProfile(Name),
    /// `DESCRIBE CONNECTOR name`.
    DescribeConnector(Name),
    /// `TEST CONNECTION PROFILE name [TIMEOUT interval]`.
    TestProfile {
        /// The profile name.
        name: Name,
        /// The bound on each network step, as written, and where.
        timeout: Option<(String, Span)>,
    },
    /// `TEST TABLE name [LIMIT n] [TIMEOUT interval]`.
    TestTable {
        /// The table name.
        name: Name,
        /// How many messages to read.
        limit: Option<u64>,
        /// The bound on each network step (and on waiting for messages), and where.
        timeout: Option<(String, Span)>,
    },
    /// `SET name = value` (not `SET TIME ZONE`, which DataFusion takes).
    Set {
        /// The option's name as written (dotted).
        name: Name,
        /// The value as text (a string's content, an interval's text).
        value: String,
        /// Where the value is.
        value_span: Span,
    },
    /// Anything else: planned and run by DataFusion.
    Query,
}

impl Statement {
    /// Whether this statement changes the catalog.
    pub fn is_ddl(&self) -> bool {
        matches!(
            self,
            Statement::CreateTable(_)
                | Statement::CreateProfile { .. }
                | Statement::AlterProfile { .. }
                | Statement::DropProfile { .. }
                | Statement::DropTable { .. }
                | Statement::CreateView(_)
                | Statement::DropView { .. }
                | Statement::CreateFunction(_)
                | Statement::DropFunction { .. }
        )
    }
}
