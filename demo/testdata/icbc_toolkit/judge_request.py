"""Print the objective judge requests of ICBCBench's evaluation toolkit.

The request body is built as evaluation_toolkit/objective_eval/judge.py of
DeepFin-Intelligence/ICBCBench (MIT licence, see ../../assets/icbcbench/LICENSE)
builds it in extract_answer and add_judge_result:

    language = "zh" if question["language"] in ["zh", "chinese", "中文"] else "en"
    prompt_template = prompt_templates["judge"][language]
    SYSTEM_PROMPT = prompt_template.format(question=question, correct_answer=correct_answer, response=response)
    client.chat.completions.parse(
        model=args.judge,
        max_completion_tokens=4096,  # overkill for judge
        messages=[{"role": "user", "content": SYSTEM_PROMPT}])

with question = question["question"] and correct_answer = question["answer"]
(a string, or a list of strings formatted as Python formats a list). The
OpenAI SDK sends these keyword arguments as the JSON body. The questions and
prompts are the toolkit's files shipped in ../../assets/icbcbench.

Run from this folder: python3 judge_request.py > requests.jsonl
"""
import json

ASSETS = "../../assets/icbcbench/"
JUDGE = "gpt-4.1"
# (question id, the system's response) pairs: an English and a Chinese
# question, the three with a list of answers, and responses with braces,
# quotes and Chinese text that the format call must leave alone.
CASES = [
    (None, "The answer is {42}, \"quoted\" and 'single'."),
    ("zh", "答案是 B。{不是模板}"),
    ("list", "A, C and D"),
]

with open(ASSETS + "objective_prompts.json", encoding="utf-8") as f:
    prompt_templates = json.load(f)
with open(ASSETS + "objective_questions_public_80.json", encoding="utf-8") as f:
    questions = json.load(f)

picked = []
en = next(q for q in questions if q["language"] == "en" and isinstance(q["answer"], str))
zh = next(q for q in questions if q["language"] == "zh" and isinstance(q["answer"], str))
picked.append((en, CASES[0][1]))
picked.append((zh, CASES[1][1]))
for q in questions:
    if isinstance(q["answer"], list):
        picked.append((q, CASES[2][1]))

for question, response in picked:
    language = "zh" if question["language"] in ["zh", "chinese", "中文"] else "en"
    prompt_template = prompt_templates["judge"][language]
    SYSTEM_PROMPT = prompt_template.format(question=question["question"], correct_answer=question["answer"], response=response)
    body = dict(model=JUDGE, max_completion_tokens=4096, messages=[{"role": "user", "content": SYSTEM_PROMPT}])
    print(json.dumps({"id": question["id"], "response": response, "body": body}, ensure_ascii=False))
