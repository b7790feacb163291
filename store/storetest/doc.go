// Package storetest is the tests' database: a migrated SQLite file in the
// test's temp dir, or under TUTTID_TEST_DB=postgres a fresh PostgreSQL
// database (New, Open, Location), rows seeded from plain specs with defaults
// (Workspace, Session, Sessions, Forks) and a client that counts the
// statements it sends (Counting), for the constant-query checks.
//
// It writes rows with ent only and imports no service, so that every
// package's tests can use it, session's internal tests included.
package storetest
