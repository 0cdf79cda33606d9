//! The AI studio's view: per capability, its binding, model, prompt versions, suite and runs.

use super::*;

/// One capability in the AI studio: its binding, its prompt's versions, the suite that gates
/// it and that suite's runs.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct StudioCapability {
    pub binding: crate::ai::pipeline::CapabilityBinding,
    /// The model it runs on now (its pin, or the workspace's only pin).
    #[ts(optional)]
    pub model: Option<String>,
    pub versions: Vec<crate::ai::pipeline::PromptVersion>,
    #[ts(optional)]
    pub suite: Option<Suite<CaseOutline>>,
    pub runs: Vec<EvalRun>,
}

/// The AI studio (Settings, for `ai.author` / `ai.manage`): every capability, the model pins,
/// the gate's decisions, and what this user may do.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Studio {
    pub capabilities: Vec<StudioCapability>,
    pub pins: Vec<String>,
    pub decisions: Vec<crate::ai::pipeline::gate::GateDecision>,
    pub can_author: bool,
    pub can_manage: bool,
}

impl Session<'_> {
    pub fn studio(&self) -> Result<Studio> {
        may_author(self)?;
        let mut capabilities = vec![];
        for binding in self.capabilities()? {
            let suite = match self.gating_suite(&binding.key)? {
                Some((key, version)) => Some(self.suite(&key, Some(version))?.outline()),
                None => None,
            };
            let runs = match &suite {
                Some(s) => self.eval_runs(Some(&s.key))?,
                None => vec![],
            };
            capabilities.push(StudioCapability {
                model: self.effective_pin(&binding)?.map(|p| p.key),
                versions: self.prompt_versions(&binding.prompt)?,
                suite,
                runs,
                binding,
            });
        }
        Ok(Studio {
            capabilities,
            pins: self.model_pins()?.into_iter().map(|p| p.key).collect(),
            decisions: self.gate_decisions()?,
            can_author: self.user().has_system_permission(AI_AUTHOR),
            can_manage: self.user().has_system_permission(AI_MANAGE),
        })
    }
}
