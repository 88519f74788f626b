package icbc

import (
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/finrepro/finrepro/results"
)

// Input file names inside the bundle's inputs/icbcbench folder. The first
// four are the authors' public files, read as they are.
const (
	ObjectiveFile  = "objective_questions_public_80.json"
	SubjectiveFile = "subjective_questions_public_40.json"
	PromptsFile    = "objective_prompts.json"
	AuthorityFile  = "authority_config.json"
	ConfigFile     = "config.json"
)

// ConfigFormat is the format line of config.json.
const ConfigFormat = "icbcbench-config/1"

// An Objective is one objective question as the authors publish it.
type Objective struct {
	ID                 string       `json:"id"`
	Question           string       `json:"question"`
	Answer             Answer       `json:"answer"`
	Classification     string       `json:"classification"`
	ClassificationCode string       `json:"classification_code"`
	Modality           string       `json:"modality"`
	Language           string       `json:"language"`
	Attachment         []Attachment `json:"attachment"`
}

// An Attachment is a file the authors attach to a multimodal question
// (not shipped with the public data).
type Attachment struct {
	OriginalFilename string `json:"original_filename"`
	MimeType         string `json:"mime_type"`
	FilePath         string `json:"file_path"`
}

// TextOnly reports whether the question is text-only.
func (o *Objective) TextOnly() bool { return o.Modality == "Text-Only" }

// A Subjective is one report-writing task with its expert rubric.
type Subjective struct {
	ID                 string `json:"id"`
	Question           string `json:"question"`
	Classification     string `json:"classification"`
	ClassificationCode string `json:"classification_code"`
	ReportType         string `json:"report_type"`
	ReportTypeZh       string `json:"report_type_zh"`
	Language           string `json:"language"`
	Criteria           string `json:"expert_evaluation_criteria"`
}

// Prompts are the authors' solver answer-format suffix and judge prompt,
// per language.
type Prompts struct {
	Answer map[string]string `json:"answer"`
	Judge  map[string]string `json:"judge"`
}

// Authority is the authors' domain lists for source-authority tiers.
type Authority struct {
	HighTrustSuffixes      []string `json:"high_trust_suffixes"`
	HighTrustDomains       []string `json:"high_trust_domains"`
	MediumHighTrustDomains []string `json:"medium_high_trust_domains"`
	MediumTrustDomains     []string `json:"medium_trust_domains"`
	DefaultWeight          float64  `json:"default_weight"`
}

// A Model is a system or judge: its display name and how to call it.
type Model struct {
	Name     string         `json:"name"`
	Provider string         `json:"provider"`
	Model    string         `json:"model"`
	Params   map[string]any `json:"params,omitempty"`
}

// A System is an evaluated system.
type System struct {
	Model
	// Group is "closed" or "open", as the paper groups its tables.
	Group string `json:"group"`
	// Citation and Source say whether the system's reports get the
	// citation-consistency and source-quality components.
	Citation bool `json:"citation,omitempty"`
	Source   bool `json:"source,omitempty"`
	// Objective and Subjective, when false, leave the system out of a
	// track (a system that writes no reports, say).
	Objective  *bool `json:"objective,omitempty"`
	Subjective *bool `json:"subjective,omitempty"`
}

// Does reports whether the system takes part in a track; absent means yes.
func (s *System) Does(track string) bool {
	p := s.Objective
	if track == "subjective" {
		p = s.Subjective
	}
	return p == nil || *p
}

// A Domain maps a classification_code prefix to a domain column.
type Domain struct {
	Prefix string `json:"prefix"`
	Name   string `json:"name"`
}

// Weights weigh the subjective components.
type Weights struct {
	Expert   float64 `json:"expert"`
	Citation float64 `json:"citation"`
	Source   float64 `json:"source"`
}

// A Config is config.json: who is evaluated, by which judges, and the
// scoring constants.
type Config struct {
	Format string `json:"format"`
	// ReferenceDate (YYYY-MM-DD) is the date source ages are counted to.
	ReferenceDate  string   `json:"reference_date"`
	Systems        []System `json:"systems"`
	ObjectiveJudge Model    `json:"objective_judge"`
	// JudgeRequest is the shape of the objective judge's requests:
	// JudgeToolkit (the default) or JudgeJoined.
	JudgeRequest string `json:"judge_request,omitempty"`
	// RubricJudges score reports against the rubrics: the first scores
	// every report; all of them score the reports of the human-consistency
	// sample.
	RubricJudges  []Model  `json:"rubric_judges"`
	CitationJudge Model    `json:"citation_judge"`
	Domains       []Domain `json:"domains"`
	// Tiers are the authority values of tiers 1 to 4.
	Tiers   []float64 `json:"tiers"`
	Alpha   float64   `json:"alpha"`
	Weights Weights   `json:"weights"`
	// ObjectiveTasks and SubjectiveTasks restrict the tasks run (by id);
	// empty means all.
	ObjectiveTasks  []string `json:"objective_tasks,omitempty"`
	SubjectiveTasks []string `json:"subjective_tasks,omitempty"`
	// MaxClaims caps the cited claims checked per report.
	MaxClaims int `json:"max_claims"`
	// HumanScores names the JSONL file of expert scores, if any.
	HumanScores string `json:"human_scores,omitempty"`
	// PrivateObjectiveFile and PrivateSubjectiveFile name a private
	// hold-out set in the public files' formats, if the bundle has one.
	PrivateObjectiveFile  string `json:"private_objective_file,omitempty"`
	PrivateSubjectiveFile string `json:"private_subjective_file,omitempty"`
}

// A HumanScore is one expert's score of one report (human_scores.jsonl).
type HumanScore struct {
	Task   string  `json:"task"`
	System string  `json:"system"`
	Expert string  `json:"expert"`
	Score  float64 `json:"score"`
}

// Inputs are the loaded and checked inputs of a run.
type Inputs struct {
	Objectives  []Objective
	Subjectives []Subjective
	Prompts     Prompts
	Authority   Authority
	Config      Config
	RefDate     time.Time
	Human       []HumanScore
	// PrivateObjectives and PrivateSubjectives are the private hold-out
	// tasks, if any.
	PrivateObjectives  []Objective
	PrivateSubjectives []Subjective
}

func readJSON(fsys fs.FS, name string, v any) error {
	f, err := fsys.Open(name)
	if err != nil {
		return fmt.Errorf("icbcbench: %w", err)
	}
	defer f.Close()
	return results.ReadJSON(f, name, v)
}

// Load reads and checks the inputs in fsys.
func Load(fsys fs.FS) (*Inputs, error) {
	in := &Inputs{}
	for _, r := range []struct {
		name string
		v    any
	}{{ObjectiveFile, &in.Objectives}, {SubjectiveFile, &in.Subjectives}, {PromptsFile, &in.Prompts}, {AuthorityFile, &in.Authority}, {ConfigFile, &in.Config}} {
		if err := readJSON(fsys, r.name, r.v); err != nil {
			return nil, err
		}
	}
	if err := in.check(); err != nil {
		return nil, err
	}
	if f := in.Config.PrivateObjectiveFile; f != "" {
		if err := readJSON(fsys, f, &in.PrivateObjectives); err != nil {
			return nil, err
		}
		if err := checkObjectives(in.PrivateObjectives, f); err != nil {
			return nil, err
		}
	}
	if f := in.Config.PrivateSubjectiveFile; f != "" {
		if err := readJSON(fsys, f, &in.PrivateSubjectives); err != nil {
			return nil, err
		}
		if err := checkSubjectives(in.PrivateSubjectives, f); err != nil {
			return nil, err
		}
	}
	if in.Config.HumanScores != "" {
		f, err := fsys.Open(in.Config.HumanScores)
		if err != nil {
			return nil, fmt.Errorf("icbcbench: %w", err)
		}
		defer f.Close()
		err = results.EachJSONL(f, in.Config.HumanScores, func(line int, h *HumanScore) error {
			switch {
			case h.Task == "":
				return results.Errorf(in.Config.HumanScores, line, "task", "empty")
			case h.System == "":
				return results.Errorf(in.Config.HumanScores, line, "system", "empty")
			case h.Expert == "":
				return results.Errorf(in.Config.HumanScores, line, "expert", "empty")
			case !(h.Score >= 0 && h.Score <= 100):
				return results.Errorf(in.Config.HumanScores, line, "score", "%v outside 0..100", h.Score)
			}
			in.Human = append(in.Human, *h)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return in, nil
}

func checkObjectives(objs []Objective, file string) error {
	seen := map[string]bool{}
	for i, o := range objs {
		field := func(f string) string { return fmt.Sprintf("[%d].%s", i, f) }
		switch {
		case o.ID == "" || seen[o.ID]:
			return results.Errorf(file, 0, field("id"), "empty or repeated id %q", o.ID)
		case o.Language != "en" && o.Language != "zh":
			return results.Errorf(file, 0, field("language"), "got %q, want en or zh", o.Language)
		case o.Question == "":
			return results.Errorf(file, 0, field("question"), "empty")
		case o.Answer.String() == "":
			return results.Errorf(file, 0, field("answer"), "empty")
		}
		seen[o.ID] = true
	}
	return nil
}

func checkSubjectives(subs []Subjective, file string) error {
	seen := map[string]bool{}
	for i, s := range subs {
		field := func(f string) string { return fmt.Sprintf("[%d].%s", i, f) }
		switch {
		case s.ID == "" || seen[s.ID]:
			return results.Errorf(file, 0, field("id"), "empty or repeated id %q", s.ID)
		case s.Language != "en" && s.Language != "zh":
			return results.Errorf(file, 0, field("language"), "got %q, want en or zh", s.Language)
		case s.Question == "":
			return results.Errorf(file, 0, field("question"), "empty")
		}
		seen[s.ID] = true
	}
	return nil
}

func (in *Inputs) check() error {
	if err := checkObjectives(in.Objectives, ObjectiveFile); err != nil {
		return err
	}
	if err := checkSubjectives(in.Subjectives, SubjectiveFile); err != nil {
		return err
	}
	for _, l := range []string{"en", "zh"} {
		if in.Prompts.Answer[l] == "" {
			return results.Errorf(PromptsFile, 0, "answer."+l, "missing")
		}
		if in.Prompts.Judge[l] == "" {
			return results.Errorf(PromptsFile, 0, "judge."+l, "missing")
		}
	}
	c := &in.Config
	if c.Format != ConfigFormat {
		return results.Errorf(ConfigFile, 0, "format", "got %q, want %q", c.Format, ConfigFormat)
	}
	d, err := time.Parse(time.DateOnly, c.ReferenceDate)
	if err != nil {
		return results.Errorf(ConfigFile, 0, "reference_date", "not a YYYY-MM-DD date: %q", c.ReferenceDate)
	}
	in.RefDate = d
	if len(c.Systems) == 0 {
		return results.Errorf(ConfigFile, 0, "systems", "empty")
	}
	names := map[string]bool{}
	for i, s := range c.Systems {
		f := fmt.Sprintf("systems[%d]", i)
		if err := checkModel(s.Model, f); err != nil {
			return err
		}
		if names[s.Name] {
			return results.Errorf(ConfigFile, 0, f+".name", "repeated %q", s.Name)
		}
		names[s.Name] = true
	}
	if err := checkModel(c.ObjectiveJudge, "objective_judge"); err != nil {
		return err
	}
	switch c.JudgeRequest {
	case "", JudgeToolkit, JudgeJoined:
	default:
		return results.Errorf(ConfigFile, 0, "judge_request", "got %q, want %q or %q", c.JudgeRequest, JudgeToolkit, JudgeJoined)
	}
	if len(c.RubricJudges) == 0 {
		return results.Errorf(ConfigFile, 0, "rubric_judges", "empty")
	}
	for i, j := range c.RubricJudges {
		if err := checkModel(j, fmt.Sprintf("rubric_judges[%d]", i)); err != nil {
			return err
		}
	}
	if err := checkModel(c.CitationJudge, "citation_judge"); err != nil {
		return err
	}
	if len(c.Domains) == 0 {
		return results.Errorf(ConfigFile, 0, "domains", "empty")
	}
	if len(c.Tiers) != 4 {
		return results.Errorf(ConfigFile, 0, "tiers", "got %d values, want 4", len(c.Tiers))
	}
	for i, t := range c.Tiers {
		if !(t >= 0 && t <= 1) {
			return results.Errorf(ConfigFile, 0, fmt.Sprintf("tiers[%d]", i), "%v outside 0..1", t)
		}
	}
	if !(c.Alpha >= 0) {
		return results.Errorf(ConfigFile, 0, "alpha", "negative")
	}
	if c.MaxClaims <= 0 {
		c.MaxClaims = 30
	}
	for _, id := range c.ObjectiveTasks {
		if !slices.ContainsFunc(in.Objectives, func(o Objective) bool { return o.ID == id }) {
			return results.Errorf(ConfigFile, 0, "objective_tasks", "no objective task %q", id)
		}
	}
	for _, id := range c.SubjectiveTasks {
		if !slices.ContainsFunc(in.Subjectives, func(s Subjective) bool { return s.ID == id }) {
			return results.Errorf(ConfigFile, 0, "subjective_tasks", "no subjective task %q", id)
		}
	}
	return nil
}

func checkModel(m Model, field string) error {
	switch {
	case strings.TrimSpace(m.Name) == "":
		return results.Errorf(ConfigFile, 0, field+".name", "empty")
	case m.Provider == "":
		return results.Errorf(ConfigFile, 0, field+".provider", "empty")
	case m.Model == "":
		return results.Errorf(ConfigFile, 0, field+".model", "empty")
	}
	return nil
}
