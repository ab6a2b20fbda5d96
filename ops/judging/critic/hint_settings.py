"""How much the programmatic critic's corrective hint says, declared once for every config that sets it
(the rollouts, RFT's later rounds)."""

from pydantic import BaseModel, Field


class CorrectiveHintSettings(BaseModel):
    hint_steps: int = Field(default=1, ge=1, le=64, description=(
        "Programmatic critic: actions of a shortest solution the hint names, from the first wrong step. "
        "1 (default, paper-faithful): MobileForge §2.3.2's corrective hint, the key mistake and the one "
        "action to take there. 12 with direct_plans and hint_from_start: the solver's whole plan, an oracle "
        "demonstration (the `oracle-plans` ablation)."))
    direct_plans: bool = Field(default=False, description=(
        "Programmatic critic: hint a template task's actions without long presses and searches where a plan "
        "fits the budget (taps and scrolls, which the tiny base can follow). False (default): the action a "
        "shortest solution takes, so the hinted action is one the critic's own step labels call reasonable. "
        "True is part of the `oracle-plans` ablation."))
    hint_from_start: bool = Field(default=False, description=(
        "Programmatic critic: the hint also names the attempt's own steps before the first wrong one. False "
        "(default, paper-faithful): only what to do at the mistake. True is part of the `oracle-plans` "
        "ablation."))
