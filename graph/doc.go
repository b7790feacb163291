// Package graph is tuttid's GraphQL API: the schema (*.graphqls, one
// domain a file), the resolvers gqlgen lays out beside it
// (*.resolvers.go), and NewHandler, the one executor the server mounts at
// /query and the tests run.
//
// The layer stays thin by rule:
//
//   - A resolver is one call to a service (Resolver.Sessions, or
//     Resolver.Forks for the fork saga) and at most one conversion; the
//     services validate, authorize by workspace and choose the errors.
//   - Every conversion between service and model types is in convert.go
//     (connections through one edges helper, "" as null, stored JSON).
//   - Fields that cost a query per row are read ahead for the whole list
//     (readAhead installs the read model's read-ahead around each query and
//     mutation); selected tells a resolver what the query asks for, so
//     that an unselected totalCount or messages costs nothing.
//   - Errors leave through presentError: a stable extensions.code and a
//     message without internals.
//
// gqlgen generates graph/generated and graph/model (go generate ./...);
// gqlgen.yml binds the schema to the ent and service types, so that no
// resolver only renames a field.
package graph
