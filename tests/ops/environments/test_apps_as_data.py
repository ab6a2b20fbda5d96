"""The pieces that make a user's apps data: the apps file, the device's packages, a user's task file,
the judges, fresh variants written by the LLM, and the critic's agreement per task type."""

import json

import pytest

from ops.agent.episode import SIMULATOR_JUDGE, AttemptRecord, CriticFeedback, GroundTruth, TaskSpec
from ops.agent.llm import LLMClient, LLMConfig
from ops.curriculum.variants import WrittenVariants
from ops.environments.apps_file import AppsFileError, apps_from_packages, load_apps_file
from ops.evaluation.user_suite import UserTaskFileError, load_user_tasks
from ops.judging.critic.calibration import agreement_by_kind
from ops.judging.critic.llm_critic import judged_task_text
from ops.judging.judges import CriticJudge, EnvironmentJudge, NoVerdict, VerdictCritic
from tests.support.openai_server import OpenAICompatibleServer, Reply


def test_an_apps_file_names_the_apps_and_refuses_what_cannot_be_one(tmp_path):
    path = tmp_path / "apps.yaml"
    path.write_text("apps:\n- {name: quillpad, package: org.quillworks.pad, description: notes}\n"
                    "- {name: tocktide, package: net.tocktide.chrono, launch_activity: .Main}\n")
    apps = load_apps_file(path)
    assert [(a.name, a.package, a.launch_activity) for a in apps] == [
        ("quillpad", "org.quillworks.pad", None), ("tocktide", "net.tocktide.chrono", ".Main")]
    for text, problem in [("[]", "non-empty list"), ("- {name: a/b, package: org.x.y}", "app 1: name"),
                          ("- {name: a, package: nodots}", "app 1: package"),
                          ("- {name: a, package: org.x.y}\n- {name: a, package: org.x.z}", "name repeats"),
                          ("- {name: a, package: org.x.y, colour: red}", "colour")]:
        path.write_text(text)
        with pytest.raises(AppsFileError, match=problem):
            load_apps_file(path)


def test_apps_from_the_devices_are_the_packages_the_patterns_match():
    listed = ["android", "com.android.launcher", "org.quillworks.pad", "org.quillworks.ink", "net.other.pad"]
    apps = apps_from_packages(listed, ["org.quillworks.*", "net.*"])
    # a short name two packages share falls back to the whole package
    assert [(a.name, a.package) for a in apps] == [("net.other.pad", "net.other.pad"), ("ink", "org.quillworks.ink"),
                                                   ("org.quillworks.pad", "org.quillworks.pad")]
    with pytest.raises(AppsFileError, match="package patterns"):
        apps_from_packages(listed, [])


def test_a_user_task_file_becomes_runnable_tasks_and_bad_tasks_are_named(tmp_path):
    path = tmp_path / "tasks.jsonl"
    path.write_text(json.dumps({"app": "quillpad", "instruction": "Open Quillpad.", "success": "Quillpad in front"})
                    + "\n\n" + json.dumps({"id": "q2", "app": "quillpad", "instruction": "How many notes?",
                                           "expected_answer": "24", "difficulty": "L2"}) + "\n")
    [(first, unrated), (second, l2)] = load_user_tasks(path, ["quillpad"])
    assert (first.task_id, unrated, second.task_id, l2) == ("quillpad-1#0", "unrated", "q2#0", "L2")
    assert first.instruction == "Open Quillpad." and "24" not in second.instruction  # the agent sees no answer
    assert "Expected answer: 24" in judged_task_text(second.instruction, second.params)
    with pytest.raises(UserTaskFileError, match="not a target app"):
        load_user_tasks(path, ["tocktide"])
    path.write_text(json.dumps({"app": "quillpad"}) + "\n")
    with pytest.raises(UserTaskFileError, match="task 1: instruction"):
        load_user_tasks(path, ["quillpad"])


def _attempt(truth: GroundTruth | None, feedback: CriticFeedback | None = None) -> AttemptRecord:
    return AttemptRecord(task=TaskSpec("t#0", "Open Quillpad.", 3, app="quillpad"), attempt=1, policy_version="p",
                         hints=[], steps=[], end_reason="terminated", answer=None, final_state=None,
                         ground_truth=truth, feedback=feedback)


def test_every_verdict_names_its_judge():
    truth = GroundTruth(success=True, progress=1.0, false_complete=False, side_effects=0, overdue=False, reward=0.5)
    verdict = EnvironmentJudge(SIMULATOR_JUDGE).verdict(_attempt(truth))
    assert (verdict.success, verdict.judge, verdict.reward) == (True, "simulator", 0.5)
    with pytest.raises(NoVerdict, match="judge it with the critic"):
        EnvironmentJudge(SIMULATOR_JUDGE).verdict(_attempt(None))

    class Critic:
        name = "llm:standin"

        def evaluate(self, attempt):
            return CriticFeedback(0, "not open", 0, True, [], None, self.name)

    verdict = CriticJudge(Critic()).verdict(_attempt(None))
    assert (verdict.success, verdict.judge, verdict.progress) == (False, "llm:standin", None)
    feedback = VerdictCritic(EnvironmentJudge(SIMULATOR_JUDGE)).evaluate(_attempt(truth))
    assert (feedback.decision, feedback.critic, feedback.hint) == (1, "simulator", None)


def test_the_llm_writes_fresh_variants_of_the_solved_tasks_first():
    def writer(request):
        task = request.messages[-1]["content"].split("Task: ", 1)[1].split("\n", 1)[0]
        return Reply(json.dumps({"variants": [{"instruction": f"{task} (variant {k})", "step_budget": 4}
                                              for k in (1, 2)] + [{"instruction": task, "step_budget": 4}]}))

    pool = [TaskSpec("a", "Open Quillpad.", 3, app="quillpad"), TaskSpec("b", "Open Tocktide.", 3, app="tocktide")]
    with OpenAICompatibleServer(writer) as server:
        variants = WrittenVariants(LLMClient(LLMConfig(model="openai/scripted-model", api_base=server.base_url)))
        written = variants.variants(pool, [pool[1]], 2, 4, {"b": ["open_app tocktide"]})
        assert [t.task_id for t in variants.variants(pool, [], 2, 1, {})] == ["a~r2.1"]  # one task asked, one kept
    # the solved task first; a variant repeating its task is dropped; at most max_tasks
    assert [(t.task_id, t.instruction, t.app) for t in written] == [
        ("b~r2.1", "Open Tocktide. (variant 1)", "tocktide"), ("b~r2.2", "Open Tocktide. (variant 2)", "tocktide"),
        ("a~r2.1", "Open Quillpad. (variant 1)", "quillpad"), ("a~r2.2", "Open Quillpad. (variant 2)", "quillpad")]
    assert variants.key(variants.instance(written[0], 7, "adagrpo")) == "b~r2.1"


def test_the_critics_agreement_per_task_type_counts_false_successes_and_failures():
    decisions = {("r", "a", 1): 1, ("r", "a", 2): 0, ("r", "b", 1): 1, ("r", "c", 1): 0}
    truths = {("r", "a", 1): False, ("r", "a", 2): True, ("r", "b", 1): True, ("r", "c", 1): False}
    kinds = {("r", "a", 1): "launch", ("r", "a", 2): "launch", ("r", "b", 1): "nav", ("r", "c", 1): "nav"}
    launch, nav, overall = agreement_by_kind(decisions, truths, kinds)
    assert (launch.kind, launch.attempts, launch.agree, launch.false_success, launch.false_failure) == \
        ("launch", 2, 0, 1, 1)
    assert (nav.agree, nav.false_success, nav.false_failure, nav.successes) == (2, 0, 0, 1)
    assert (overall.kind, overall.attempts, overall.agree, overall.agreement) == ("all", 4, 2, 0.5)
