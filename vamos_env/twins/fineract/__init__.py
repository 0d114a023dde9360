"""The Apache Fineract loan twin: state (pure), routes (Fineract's REST wire format), errors."""

from vamos_env.twins.fineract.state import FineractState
from vamos_env.twins.fineract.twin import LoanTwin

__all__ = ["FineractState", "LoanTwin"]
