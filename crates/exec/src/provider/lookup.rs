//! Lookup joins: a join whose right side is a lookup (temporary) table is planned as
//! [`LookupJoin`], which fetches the rows of each key the left side brings, instead of a
//! hash join over a scan of the whole lookup table (which a key-value store cannot give).
//! [`LookupJoins`] is the optimizer rule that finds them; `lookup_exec` plans them.

use super::table::ConnectionTableProvider;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{Column, DFSchemaRef, Result, TableReference};
use datafusion::datasource::source_as_provider;
use datafusion::logical_expr::{
    Expr, JoinType, LogicalPlan, TableScan, UserDefinedLogicalNodeCore,
};
use datafusion::optimizer::{ApplyOrder, OptimizerConfig, OptimizerRule};
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use tributary_dialect::datafusion_diagnostics::to_datafusion;
use tributary_types::{ConnectionType, Diagnostic};

/// The lookup table's provider, as a plan holds it: compared and hashed by the table's
/// id, since a plan node must be.
#[derive(Debug, Clone)]
pub struct LookupSource(pub Arc<ConnectionTableProvider>);

impl PartialEq for LookupSource {
    fn eq(&self, other: &Self) -> bool {
        self.0.table().id == other.0.table().id
    }
}

impl Eq for LookupSource {}

impl Hash for LookupSource {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.table().id.hash(state);
    }
}

/// A join of a stream (the input) with a lookup table, by key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LookupJoin {
    /// The left side: what brings the keys.
    pub input: LogicalPlan,
    /// The lookup table.
    pub source: LookupSource,
    /// The lookup table's name.
    pub table: String,
    /// Its connector.
    pub connector: String,
    /// The name the lookup table's columns are qualified with (its alias).
    pub qualifier: Option<TableReference>,
    /// The lookup table's columns the join reads, by name.
    pub columns: Vec<String>,
    /// The lookup table's columns the join emits, by name (some read columns serve only
    /// the lookup filter).
    pub outputs: Vec<String>,
    /// Each key: an expression over the input, and the lookup table's column it equals.
    pub on: Vec<(Expr, String)>,
    /// A condition on the looked-up rows (a filter written on the lookup table).
    pub lookup_filter: Option<Expr>,
    /// A condition on the joined row (non-equality parts of ON).
    pub filter: Option<Expr>,
    /// Inner (rows without a match dropped) or Left (kept, with NULLs).
    pub join_type: JoinType,
    /// The output: the input's columns, then the lookup table's.
    pub schema: DFSchemaRef,
}

impl PartialOrd for LookupJoin {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        // Plans are compared for equality; an order only needs to be consistent with it.
        (self == other)
            .then_some(Ordering::Equal)
            .or_else(|| self.table.partial_cmp(&other.table))
    }
}

impl UserDefinedLogicalNodeCore for LookupJoin {
    fn name(&self) -> &str {
        "LookupJoin"
    }

    fn inputs(&self) -> Vec<&LogicalPlan> {
        vec![&self.input]
    }

    fn schema(&self) -> &DFSchemaRef {
        &self.schema
    }

    fn expressions(&self) -> Vec<Expr> {
        let mut out: Vec<Expr> = self.on.iter().map(|(e, _)| e.clone()).collect();
        out.extend(self.filter.iter().cloned());
        out
    }

    fn fmt_for_explain(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let keys: Vec<String> = self
            .on
            .iter()
            .map(|(e, c)| format!("{e} = {}", self.qualified(c)))
            .collect();
        write!(
            f,
            "LookupJoin: {} {}, on=[{}]",
            self.join_type,
            self.table,
            keys.join(", ")
        )?;
        if let Some(lf) = &self.lookup_filter {
            write!(f, ", lookup_filter={lf}")?;
        }
        if let Some(jf) = &self.filter {
            write!(f, ", filter={jf}")?;
        }
        Ok(())
    }

    fn with_exprs_and_inputs(&self, exprs: Vec<Expr>, inputs: Vec<LogicalPlan>) -> Result<Self> {
        let mut node = self.clone();
        if let Some(input) = inputs.into_iter().next() {
            node.input = input;
        }
        let keys = self.on.len();
        for (slot, e) in node.on.iter_mut().zip(exprs.iter()) {
            slot.0 = e.clone();
        }
        node.filter = exprs.get(keys).cloned();
        Ok(node)
    }
}

impl LookupJoin {
    fn qualified(&self, column: &str) -> String {
        match &self.qualifier {
            Some(q) => format!("{q}.{column}"),
            None => column.to_string(),
        }
    }
}

/// The optimizer rule that plans joins with lookup tables as [`LookupJoin`]s.
#[derive(Debug, Default)]
pub struct LookupJoins;

impl OptimizerRule for LookupJoins {
    fn name(&self) -> &str {
        "tributary_lookup_joins"
    }

    fn apply_order(&self) -> Option<ApplyOrder> {
        Some(ApplyOrder::BottomUp)
    }

    fn rewrite(
        &self,
        plan: LogicalPlan,
        _config: &dyn OptimizerConfig,
    ) -> Result<Transformed<LogicalPlan>> {
        let LogicalPlan::Join(join) = &plan else {
            return Ok(Transformed::no(plan));
        };
        if !matches!(join.join_type, JoinType::Inner | JoinType::Left) {
            return Ok(Transformed::no(plan));
        }
        let Some(side) = lookup_side(&join.right) else {
            return Ok(Transformed::no(plan));
        };
        // A lookup fetches by key: every key must be the lookup table's PRIMARY KEY
        // column, as written, and there must be one. Anything else would scan the table.
        let table = side.source.0.table();
        let key_column = table
            .schema
            .primary_keys
            .iter()
            .next()
            .map_or("key_column", String::as_str);
        let refuse = |why: &str| {
            Err(to_datafusion(
                Diagnostic::error(format!(
                    "lookup table '{}' must be joined on its key: {why}",
                    table.name
                ))
                .with_help(format!(
                    "Join it with ON stream_column = {}.{key_column} (and other conditions with AND).",
                    table.name
                ))
                .with_code(tributary_types::codes::PLAN_ERROR),
            ))
        };
        if join.on.is_empty() {
            return refuse("the join has no equality with one of its columns");
        }
        let mut on = Vec::with_capacity(join.on.len());
        for (left, right) in &join.on {
            // The planner casts a key column to the other side's type; keys are compared
            // as text, so the column itself is the key.
            let right = match right {
                Expr::Cast(c) => c.expr.as_ref(),
                Expr::TryCast(c) => c.expr.as_ref(),
                other => other,
            };
            match right {
                Expr::Column(c) if !table.schema.primary_keys.contains(&c.name) => {
                    return refuse(&format!("'{}' is not its PRIMARY KEY column", c.name));
                }
                Expr::Column(c) if side.columns.contains(&c.name) => {
                    on.push((left.clone(), c.name.clone()))
                }
                other => {
                    return refuse(&format!(
                        "'{other}' is an expression, not one of its columns"
                    ));
                }
            }
        }
        let node = LookupJoin {
            input: join.left.as_ref().clone(),
            table: table.name.clone(),
            connector: table.connector.clone(),
            source: side.source.clone(),
            qualifier: side.qualifier,
            columns: side.columns,
            outputs: side.outputs,
            on,
            lookup_filter: side.filter,
            filter: join.filter.clone(),
            join_type: join.join_type,
            schema: join.schema.clone(),
        };
        Ok(Transformed::yes(LogicalPlan::Extension(
            datafusion::logical_expr::Extension {
                node: Arc::new(node),
            },
        )))
    }
}

/// What the right side of a join reads, when it is a lookup table (under an alias, a
/// projection of its columns, and filters).
struct LookupSide {
    source: LookupSource,
    qualifier: Option<TableReference>,
    columns: Vec<String>,
    outputs: Vec<String>,
    filter: Option<Expr>,
}

fn lookup_side(plan: &LogicalPlan) -> Option<LookupSide> {
    match plan {
        LogicalPlan::TableScan(scan) => scanned_lookup(scan),
        LogicalPlan::SubqueryAlias(a) => {
            let mut side = lookup_side(&a.input)?;
            side.qualifier = Some(a.alias.clone());
            // Filters written on the table refer to it by its alias now.
            side.filter = match side.filter {
                Some(f) => Some(requalify(f, &a.alias).ok()?),
                None => None,
            };
            Some(side)
        }
        LogicalPlan::Filter(f) => {
            let mut side = lookup_side(&f.input)?;
            side.filter = Some(match side.filter {
                Some(existing) => existing.and(f.predicate.clone()),
                None => f.predicate.clone(),
            });
            Some(side)
        }
        LogicalPlan::Projection(p) => {
            let mut side = lookup_side(&p.input)?;
            let mut columns = Vec::with_capacity(p.expr.len());
            for e in &p.expr {
                match e {
                    Expr::Column(c) => columns.push(c.name.clone()),
                    _ => return None,
                }
            }
            // The read columns stay: a filter below the projection may need them.
            side.outputs = columns;
            Some(side)
        }
        _ => None,
    }
}

fn scanned_lookup(scan: &TableScan) -> Option<LookupSide> {
    let provider = source_as_provider(&scan.source).ok()?;
    let any: Arc<dyn std::any::Any + Send + Sync> = provider;
    let provider = any.downcast::<ConnectionTableProvider>().ok()?;
    if provider.table().connection_type != ConnectionType::Lookup {
        return None;
    }
    let columns: Vec<String> = scan
        .projected_schema
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    let filter = scan.filters.iter().cloned().reduce(Expr::and);
    Some(LookupSide {
        source: LookupSource(provider),
        qualifier: Some(scan.table_name.clone()),
        outputs: columns.clone(),
        columns,
        filter,
    })
}

/// `expr` with its columns qualified by `alias`.
fn requalify(expr: Expr, alias: &TableReference) -> Result<Expr> {
    use datafusion::common::tree_node::TreeNode;
    expr.transform_up(|e| {
        Ok(match e {
            Expr::Column(c) => {
                Transformed::yes(Expr::Column(Column::new(Some(alias.clone()), c.name)))
            }
            other => Transformed::no(other),
        })
    })
    .map(|t| t.data)
}
