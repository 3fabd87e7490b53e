-- The conversation-level scores of one conversation in one iteration and lane.
SELECT sample_id AS conversation_id, scenario, chatbot_role, turns, assistant_turns,
       window_size, expectation_mean, expectation_pass_rate, relevancy, knowledge_retention,
       completeness, role_adherence, intents, reason, judge
FROM conversation_scores
WHERE run_id = $run_id AND sample_id = $sample_id AND iteration = $iteration
  AND candidate = $candidate;
