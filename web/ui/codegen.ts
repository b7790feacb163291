import type { CodegenConfig } from "@graphql-codegen/cli";

// Typed operations from the server's schema (graph/*.graphqls) and the
// operations in src/ops.graphql; `npm run codegen` rewrites src/gql/.
const config: CodegenConfig = {
  schema: "../../graph/*.graphqls",
  documents: ["src/**/*.graphql"],
  ignoreNoDocuments: false,
  generates: {
    "src/gql/": {
      preset: "client",
      presetConfig: { fragmentMasking: false },
      config: {
        enumsAsTypes: true,
        useTypeImports: true,
        scalars: { Time: "string", Int64: "number", JSON: "unknown", Cursor: "string" },
      },
    },
  },
};
export default config;
