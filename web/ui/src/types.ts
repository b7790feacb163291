import type { SessionSummaryFragment, MessageFieldsFragment, TurnFieldsFragment, SessionDetailQuery } from "./gql/graphql";

export type Summary = SessionSummaryFragment;
export type Msg = MessageFieldsFragment;
export type TurnInfo = TurnFieldsFragment;
export type Detail = NonNullable<SessionDetailQuery["session"]>;
