import type { SessionSummaryFragment, MessageFieldsFragment, TurnFieldsFragment, TurnWithMessagesFragment, SessionDetailQuery } from "./gql/graphql";

export type Summary = SessionSummaryFragment;
export type Msg = MessageFieldsFragment;
export type TurnInfo = TurnFieldsFragment;
export type LoadedTurn = TurnWithMessagesFragment;
export type Detail = NonNullable<SessionDetailQuery["session"]>;
