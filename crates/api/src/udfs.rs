//! `GET /udfs`: the functions declared with `CREATE FUNCTION`, in the shape of Arroyo's
//! global UDFs (`GlobalUdf`), so Arroyo's console lists them. Tributary stores a
//! function's signature, not its code: the definition is the statement that declared it.

use super::ApiError;
use super::profiles::catalog;
use serde::Serialize;
use tributary_sql::Session;
use tributary_types::DefinitionKind;
use utoipa::ToSchema;

/// A declared function, as Arroyo shows a global UDF.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct GlobalUdfView {
    /// Its name, which stands for the function here (names are unique).
    pub id: String,
    /// Arroyo's prefix of global UDFs: empty, as Tributary has none.
    pub prefix: String,
    /// Its name.
    pub name: String,
    /// When it was declared, microseconds since the epoch.
    pub created_at: i64,
    /// When it last changed.
    pub updated_at: i64,
    /// The `CREATE FUNCTION` statement that declared it.
    pub definition: String,
    /// A description: none (SQL declarations carry none).
    pub description: Option<String>,
    /// Where Arroyo keeps a compiled UDF: none, as Tributary compiles nothing.
    pub dylib_url: Option<String>,
}

/// `{"data": [...]}`: every declared function, by name.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct GlobalUdfCollection {
    /// The functions.
    pub data: Vec<GlobalUdfView>,
}

/// Every function the catalog declares, by name.
pub fn list_udfs(session: &Session) -> Result<GlobalUdfCollection, ApiError> {
    let mut functions = session
        .store()
        .definitions(DefinitionKind::Function)
        .map_err(catalog)?;
    functions.sort_by_key(|f| f.name.to_lowercase());
    let data = functions
        .iter()
        .map(|f| GlobalUdfView {
            id: f.name.clone(),
            prefix: String::new(),
            name: f.name.clone(),
            created_at: f.created_at,
            updated_at: f.updated_at,
            definition: format!("{};", tributary_dialect::sql_writer::create_definition(f)),
            description: None,
            dylib_url: None,
        })
        .collect();
    Ok(GlobalUdfCollection { data })
}
