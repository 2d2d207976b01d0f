"""The L1-L2-L3 harness: one question end to end, bounded, traced.

    runner.Harness       ask(): plan -> follow -> search by the question's words -> reply; confirm(): a pending action
    planner  (L1)        one tool, plan(skill, rationale); PlanSignal ends the pass
    follower (L2)        one tool, call_tool(tool, instruction); one session, transcript rebuilt from steps
    dispatch             resolve name -> dedup -> budget (ToolLoopHalt) -> L3
    toolagent (L3)       fresh one-tool session, constrained arguments, the tool runs once (guards off)
    plumbing             hidden tools the runtime uses itself (current_date ranges, list_devices scope)
    turn                 TurnContext: guards, budgets, limits, side channels, every model call
    retrieval            every local store searched with the question's own words (no model call)
    channels, reply      exact payloads; candidate spans, the model's choice among them, the composed answer
    direct               the baseline: every tool's full schema in one session
    trace, usage_report  role-tagged records, step log lines, tool utilisation
    skills, prompts      skills/*.md loader; all prompt text, stable prefix first
    reserve, startup     output reserves from schemas; start-up window checks
    synthetic            synthetic tool manifests for prompt-growth measurements
"""
