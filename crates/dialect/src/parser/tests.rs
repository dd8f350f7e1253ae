//! Parser tests: every statement form, spans, and syntax errors.

use super::ast::{DropBehavior, Statement};
use super::parse_script;
use tributary_types::{Location, OptionValue};

fn one(sql: &str) -> Statement {
    let mut v = parse_script(sql);
    assert_eq!(v.len(), 1, "{sql}");
    match v.remove(0) {
        Ok(s) => s.statement,
        Err(e) => panic!("{sql}: {}", e.diagnostic),
    }
}

fn err(sql: &str) -> tributary_types::Diagnostic {
    match parse_script(sql).remove(0) {
        Ok(_) => panic!("parsed: {sql}"),
        Err(e) => *e.diagnostic,
    }
}

#[test]
fn arroyo_table_with_everything() {
    let sql = "CREATE TABLE orders (\n  id BIGINT NOT NULL PRIMARY KEY,\n  ts TIMESTAMP(3) NOT NULL,\n  tags TEXT[],\n  s STRUCT<a INT, b TEXT>,\n  amount DECIMAL(10, 2),\n  u INT UNSIGNED,\n  doc JSON,\n  part INT METADATA FROM 'partition',\n  off BIGINT GENERATED ALWAYS AS (metadata('offset_id')) STORED,\n  double_id BIGINT GENERATED ALWAYS AS (id * 2),\n  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND\n) WITH (\n  connector = 'kafka',\n  'source.offset' = 'earliest',\n  bootstrap.servers = 'x',\n  rate = 1.5,\n  flag = true,\n  every = INTERVAL '1' MINUTE,\n  fields = [a, 'b']\n) PARTITIONED BY (bucket(id, 4))";
    let Statement::CreateTable(t) = one(sql) else {
        panic!()
    };
    assert_eq!(t.name.value, "orders");
    assert_eq!(t.columns.len(), 10);
    assert!(t.columns[0].not_null && t.columns[0].primary_key);
    assert_eq!(t.columns[7].metadata_key.as_ref().unwrap().0, "partition");
    assert_eq!(t.columns[8].metadata_key.as_ref().unwrap().0, "offset_id");
    assert!(t.columns[9].generated.is_some());
    assert_eq!(t.watermarks.len(), 1);
    assert_eq!(
        t.watermarks[0].expr.as_ref().unwrap().0.to_string(),
        "ts - INTERVAL '5' SECOND"
    );
    let keys: Vec<&str> = t.options.iter().map(|o| o.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "connector",
            "source.offset",
            "bootstrap.servers",
            "rate",
            "flag",
            "every",
            "fields"
        ]
    );
    assert_eq!(t.options[3].value, OptionValue::Number("1.5".into()));
    assert_eq!(t.options[4].value, OptionValue::Bool(true));
    assert!(matches!(t.options[5].value, OptionValue::Interval(_)));
    assert_eq!(
        t.options[6].value,
        OptionValue::Array(vec![
            OptionValue::Identifier("a".into()),
            OptionValue::String("b".into())
        ])
    );
    assert_eq!(t.options[1].key_span.start, Location::new(15, 3));
    assert_eq!(t.options[1].value_span.start, Location::new(15, 21));
    assert_eq!(t.partitioned_by.len(), 1);
}

#[test]
fn table_level_primary_key_and_temporary() {
    let Statement::CreateTable(t) = one(
        "CREATE TEMPORARY TABLE lk (k TEXT, v TEXT, PRIMARY KEY (k)) WITH (connector = 'redis')",
    ) else {
        panic!()
    };
    assert!(t.temporary);
    assert_eq!(t.primary_key[0].value, "k");
}

#[test]
fn profile_statements() {
    assert!(matches!(
        one("CREATE CONNECTION PROFILE IF NOT EXISTS p WITH (connector = 'kafka')"),
        Statement::CreateProfile {
            if_not_exists: true,
            ..
        }
    ));
    assert!(matches!(
        one("alter connection profile p set (bootstrap_servers = 'a:1')"),
        Statement::AlterProfile { .. }
    ));
    assert!(matches!(
        one("DROP CONNECTION PROFILE IF EXISTS p CASCADE"),
        Statement::DropProfile {
            if_exists: true,
            behavior: DropBehavior::Cascade,
            ..
        }
    ));
    assert!(matches!(
        one("SHOW CONNECTION PROFILES"),
        Statement::ShowProfiles
    ));
    assert!(matches!(
        one("DESCRIBE CONNECTION PROFILE p"),
        Statement::DescribeProfile(_)
    ));
    assert!(matches!(
        one("SHOW CREATE CONNECTION PROFILE p"),
        Statement::ShowCreateProfile(_)
    ));
    assert!(matches!(
        one("TEST TABLE t LIMIT 5"),
        Statement::TestTable { limit: Some(5), .. }
    ));
    assert!(matches!(
        one("describe connector kafka"),
        Statement::DescribeConnector(_)
    ));
}

#[test]
fn queries_are_left_to_datafusion() {
    assert!(matches!(one("SELECT 1"), Statement::Query));
    assert!(matches!(
        one("EXPLAIN INSERT INTO a SELECT * FROM b"),
        Statement::Query
    ));
}

#[test]
fn scripts_split_with_positions_and_independent_errors() {
    let v = parse_script("SELECT 1;\n-- comment only\n;\nCREATE TABLE (oops);\nSHOW TABLES;");
    assert_eq!(v.len(), 3);
    assert!(v[0].is_ok());
    let e = v[1].as_ref().unwrap_err();
    assert_eq!(e.span.start, Location::new(4, 1));
    assert_eq!(
        e.diagnostic.message,
        "syntax error: expected identifier, found ("
    );
    assert_eq!(e.diagnostic.span.unwrap().start, Location::new(4, 14));
    assert!(v[2].is_ok());
}

#[test]
fn syntax_errors_point_at_the_token() {
    let d = err("CREATE TABLE t (a INT) WITH (topic 'x')");
    assert_eq!(
        d.message,
        "syntax error: expected '=' after option 'topic', found 'x'"
    );
    assert_eq!(d.span.unwrap().start, Location::new(1, 36));
    let d = err("CREATE TABLE t (a INT FOO) WITH (connector = 'kafka')");
    assert_eq!(
        d.message,
        "syntax error: unexpected 'FOO' in the definition of column 'a'"
    );
    let d = err("CREATE TABLE t (a INT GENERATED ALWAYS AS (metadata(1)) STORED) WITH (x = 'y')");
    assert_eq!(
        d.message,
        "the 'metadata' call of a metadata column must have a literal string argument"
    );
    let d = err("SELECT 'unterminated");
    assert!(
        d.message.starts_with("syntax error: unterminated string"),
        "{}",
        d.message
    );
}

#[test]
fn other_ddl_is_refused_with_a_reason() {
    let d = err("CREATE INDEX i ON t (a)");
    assert_eq!(d.message, "CREATE INDEX is not supported");
    assert_eq!(
        err("create or replace table t (a int)").message,
        "CREATE OR REPLACE is for views and functions"
    );
    assert_eq!(
        err("ALTER TABLE t ADD COLUMN b INT").message,
        "ALTER TABLE is not supported"
    );
    assert_eq!(
        err("CREATE EXTERNAL TABLE x STORED AS CSV LOCATION 'x'").message,
        "CREATE EXTERNAL is not supported"
    );
}

#[test]
fn views_keep_their_query_text_and_where_it_is() {
    let sql = "-- a view\nCREATE OR REPLACE VIEW Big (a, b) AS\n  SELECT x, y FROM t WHERE x > 1";
    let Statement::CreateView(v) = one(sql) else {
        panic!()
    };
    assert_eq!(v.name.value, "big");
    assert!(v.or_replace && !v.if_not_exists);
    assert_eq!(
        v.columns
            .iter()
            .map(|c| c.value.as_str())
            .collect::<Vec<_>>(),
        ["a", "b"]
    );
    assert_eq!(v.query.text, "SELECT x, y FROM t WHERE x > 1");
    assert_eq!(v.query.span.start, Location::new(3, 3));
    assert_eq!(
        err("CREATE VIEW v AS DROP TABLE t").message,
        "syntax error: expected SELECT, VALUES, or a subquery in the query body, found DROP"
    );
    let Statement::DropView {
        names, behavior, ..
    } = one("DROP VIEW IF EXISTS a, b CASCADE")
    else {
        panic!()
    };
    assert_eq!(names.len(), 2);
    assert_eq!(behavior, DropBehavior::Cascade);
    assert!(matches!(one("SHOW VIEWS"), Statement::ShowViews));
    assert!(matches!(
        one("show create view v"),
        Statement::ShowCreateView(_)
    ));
    let Statement::CreateTableAs { name, query } = one("CREATE TABLE t AS (SELECT 1)") else {
        panic!()
    };
    assert_eq!(
        (name.value.as_str(), query.text.as_str()),
        ("t", "(SELECT 1)")
    );
    let Statement::DropTable { behavior, .. } = one("DROP TABLE t CASCADE") else {
        panic!()
    };
    assert_eq!(behavior, DropBehavior::Cascade);
}

#[test]
fn declared_functions_record_their_signature() {
    let Statement::CreateFunction(f) =
        one("CREATE ASYNC FUNCTION geo(country TEXT, BIGINT) RETURNS TEXT LANGUAGE python")
    else {
        panic!()
    };
    let sig = &f.signature;
    assert!(sig.is_async && !sig.aggregate);
    assert_eq!(sig.args[0].name.as_deref(), Some("country"));
    assert_eq!(sig.args[1].name, None);
    assert_eq!(sig.args[1].data_type, "BIGINT");
    assert_eq!(
        (sig.returns.as_str(), sig.language.as_deref()),
        ("TEXT", Some("python"))
    );
    let Statement::CreateFunction(f) = one("CREATE AGGREGATE FUNCTION m(DOUBLE) RETURNS DOUBLE")
    else {
        panic!()
    };
    assert!(f.signature.aggregate);
    assert!(matches!(
        one("DROP FUNCTION IF EXISTS m(DOUBLE)"),
        Statement::DropFunction {
            if_exists: true,
            ..
        }
    ));
    assert_eq!(
        err("CREATE FUNCTION f(x INT) RETURNS INT AS 'x'").message,
        "a declared function has no body here"
    );
    assert_eq!(
        err("DROP FUNCTION f CASCADE").message,
        "DROP FUNCTION does not take CASCADE"
    );
}
