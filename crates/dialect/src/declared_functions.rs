//! Declared functions (`CREATE FUNCTION name(args) RETURNS type`): a UDF's signature
//! recorded in the catalog, so pipelines that call a UDF defined elsewhere (an Arroyo
//! Rust or Python UDF) plan and are type-checked here. They are registered on a session
//! as DataFusion functions with exactly that signature; running one says where its body
//! lives. The session re-reads them when the catalog's generation changes.

use crate::parser::DIALECT;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, ColumnarValue, ScalarFunctionArgs, ScalarUDF,
    ScalarUDFImpl, Signature, TypeSignature, Volatility,
};
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::parser::Parser;
use std::sync::Arc;
use tributary_catalog::CatalogStore;
use tributary_types::{Definition, DefinitionBody, DefinitionKind, FunctionSignature, Span};

/// The declared functions registered on a session, and the catalog generation they were
/// read at.
#[derive(Debug, Default)]
pub struct Registered {
    generation: Option<u64>,
    names: Vec<(String, bool)>,
}

/// The Arrow type of a declared SQL type, or why it has none.
pub(crate) fn arrow_type(sql_type: &str) -> Result<DataType, String> {
    let parsed = Parser::new(&DIALECT)
        .try_with_sql(sql_type)
        .and_then(|mut p| p.parse_data_type())
        .map_err(|e| format!("'{sql_type}' is not a type: {e}"))?;
    crate::column_types::field_type("argument", &parsed, Span::default())
        .map(|t| t.to_arrow())
        .map_err(|d| d.message)
}

/// The Arrow types of a signature's arguments and result.
pub fn arrow_signature(sig: &FunctionSignature) -> Result<(Vec<DataType>, DataType), String> {
    let args = sig
        .args
        .iter()
        .map(|a| arrow_type(&a.data_type))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((args, arrow_type(&sig.returns)?))
}

/// Bring the session's declared functions in line with the catalog: register those
/// declared since the last call, drop those dropped. A function whose types no longer
/// read (never, unless the catalog was edited by hand) is left out and named in the
/// error.
pub fn sync(
    ctx: &SessionContext,
    store: &dyn CatalogStore,
    registered: &std::sync::Mutex<Registered>,
) -> std::result::Result<(), String> {
    let Ok(mut reg) = registered.lock() else {
        return Err("internal error: the declared functions' lock is poisoned".into());
    };
    let generation = store.generation();
    if reg.generation == Some(generation) {
        return Ok(());
    }
    let declared = store
        .definitions(DefinitionKind::Function)
        .map_err(|e| e.to_string())?;
    for (name, aggregate) in reg.names.drain(..) {
        if aggregate {
            ctx.deregister_udaf(&name);
        } else {
            ctx.deregister_udf(&name);
        }
    }
    let mut broken = Vec::new();
    for d in &declared {
        match function_of(d) {
            Ok(Declared::Scalar(f)) => {
                reg.names.push((f.name().to_string(), false));
                ctx.register_udf(f);
            }
            Ok(Declared::Aggregate(f)) => {
                reg.names.push((f.name().to_string(), true));
                ctx.register_udaf(f);
            }
            Err(e) => broken.push(format!("{}: {e}", d.name)),
        }
    }
    reg.generation = Some(generation);
    if broken.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "declared functions that cannot be used: {}",
            broken.join("; ")
        ))
    }
}

/// A declared function as DataFusion's.
pub(crate) enum Declared {
    Scalar(ScalarUDF),
    Aggregate(AggregateUDF),
}

/// The DataFusion function a definition declares.
pub(crate) fn function_of(d: &Definition) -> Result<Declared, String> {
    let DefinitionBody::Function(sig) = &d.body else {
        return Err(format!("'{}' is not a function", d.name));
    };
    let (args, returns) = arrow_signature(sig)?;
    let signature = if args.is_empty() {
        Signature::new(TypeSignature::Nullary, Volatility::Volatile)
    } else {
        Signature::exact(args, Volatility::Volatile)
    };
    let name = d.name.to_lowercase();
    Ok(if sig.aggregate {
        Declared::Aggregate(AggregateUDF::from(DeclaredAggregate {
            name,
            signature,
            returns,
        }))
    } else {
        Declared::Scalar(ScalarUDF::from(DeclaredScalar {
            name,
            signature,
            returns,
        }))
    })
}

fn no_body(name: &str) -> DataFusionError {
    DataFusionError::Execution(format!(
        "function '{name}' is declared here but its body is not: it runs where it is defined (an Arroyo UDF), so a query that calls it can be checked, not run, by Tributary"
    ))
}

/// A declared scalar (or async) function.
#[derive(Debug, PartialEq, Eq, Hash)]
struct DeclaredScalar {
    name: String,
    signature: Signature,
    returns: DataType,
}

impl ScalarUDFImpl for DeclaredScalar {
    fn name(&self) -> &str {
        &self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(self.returns.clone())
    }

    fn invoke_with_args(&self, _args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        Err(no_body(&self.name))
    }
}

/// A declared aggregate function.
#[derive(Debug, PartialEq, Eq, Hash)]
struct DeclaredAggregate {
    name: String,
    signature: Signature,
    returns: DataType,
}

impl AggregateUDFImpl for DeclaredAggregate {
    fn name(&self) -> &str {
        &self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(self.returns.clone())
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(vec![Arc::new(Field::new(
            format!("{}_state", args.name),
            self.returns.clone(),
            true,
        ))])
    }

    fn accumulator(&self, _args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        Err(no_body(&self.name))
    }
}
