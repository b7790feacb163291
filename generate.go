package main

// ent first: the GraphQL layer binds to the ent types it generates.
//go:generate go run entgo.io/ent/cmd/ent generate --feature sql/upsert,sql/lock,sql/execquery,sql/modifier ./ent/schema
//go:generate go run github.com/99designs/gqlgen generate
